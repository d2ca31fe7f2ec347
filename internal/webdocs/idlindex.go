package webdocs

import (
	"fmt"
	"sort"
	"strings"
)

// idlIndex finds the IDL of an interface or of one of its members across
// every spec: an interface is defined once and extended by partial
// interfaces elsewhere, and takes members from the mixins it includes
// (Element includes ParentNode, ChildNode, ...).
type idlIndex struct {
	defs     map[string][]*IDLDefinition // name → non-partial first, then partials by spec
	includes map[string][]string         // interface → mixins, sorted
	specs    map[string]*IDLFile         // spec shortname → file (for its title and URL)
}

func newIDLIndex(files []IDLFile) *idlIndex {
	x := &idlIndex{defs: map[string][]*IDLDefinition{}, includes: map[string][]string{}, specs: map[string]*IDLFile{}}
	for i := range files {
		f := &files[i]
		x.specs[f.Spec] = f
		for j := range f.Definitions {
			d := &f.Definitions[j]
			if d.Kind == "includes" {
				x.includes[d.Name] = append(x.includes[d.Name], d.Inherits)
				continue
			}
			x.defs[d.Name] = append(x.defs[d.Name], d)
		}
	}
	for name, ds := range x.defs {
		sort.SliceStable(ds, func(i, j int) bool {
			if ds[i].Partial != ds[j].Partial {
				return !ds[i].Partial
			}
			return ds[i].Spec < ds[j].Spec
		})
		x.defs[name] = ds
	}
	for _, ms := range x.includes {
		sort.Strings(ms)
	}
	return x
}

// idlTarget names what a page documents in IDL terms.
type idlTarget struct {
	Interface string
	Member    string // "" for the interface itself; "constructor" for its constructor
	Static    bool
}

// targetFor maps a page to the IDL it documents, from its first "api."
// compat key (api.ResizeObserver.observe) or, when that names no IDL
// interface, its slug (Web/API/ResizeObserver/observe). The slug is what
// finds the members of global mixins: BCD keys Window's fetch page
// api.fetch, a global, while fetch is declared on the
// WindowOrWorkerGlobalScope mixin that Window includes. Events have no IDL
// of their own.
func (x *idlIndex) targetFor(p *page) (idlTarget, bool) {
	var parts []string
	for _, k := range p.Compat {
		if strings.HasPrefix(k, "api.") {
			parts = strings.Split(k, ".")[1:]
			break
		}
	}
	if !x.names(parts) {
		rest, ok := strings.CutPrefix(p.Slug, "Web/API/")
		if !ok {
			return idlTarget{}, false
		}
		parts = strings.Split(rest, "/")
	}
	if !x.names(parts) {
		return idlTarget{}, false
	}
	t := idlTarget{Interface: parts[0]}
	if len(parts) == 2 {
		m := parts[1]
		if strings.HasSuffix(m, "_event") || strings.HasSuffix(m, "_permission") {
			return idlTarget{}, false
		}
		m, t.Static = strings.CutSuffix(m, "_static")
		if m == t.Interface {
			m = "constructor"
		}
		t.Member = m
	}
	return t, true
}

// names reports whether parts (from a compat key or a slug) start with a
// defined name and have at most one member after it.
func (x *idlIndex) names(parts []string) bool {
	return len(parts) > 0 && len(parts) <= 2 && x.defs[parts[0]] != nil
}

// render returns the IDL text for t: the whole interface (its
// definition and partials, the "includes" lines naming its mixins, then
// each mixin's definitions, so a cut still names every mixin) or only the
// declarations of one member, each under the header of the definition it
// is in, followed by the "includes" line when that is a mixin. It returns
// "" when the IDL has no such member. Every block names its spec.
func (x *idlIndex) render(t idlTarget, maxBytes int) (string, []*IDLMember) {
	var b strings.Builder
	var found []*IDLMember
	write := func(d *IDLDefinition, body string) bool {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		spec := x.specs[d.Spec]
		fmt.Fprintf(&b, "// %s", d.Spec)
		if spec != nil && spec.SpecTitle != "" {
			fmt.Fprintf(&b, ": %s", spec.SpecTitle)
		}
		if spec != nil && spec.SpecURL != "" {
			fmt.Fprintf(&b, " (%s)", spec.SpecURL)
		}
		b.WriteString("\n")
		b.WriteString(body)
		b.WriteString("\n")
		return b.Len() < maxBytes
	}
	if t.Member == "" {
		x.renderWhole(t.Interface, &b, write, maxBytes)
	}
	for _, d := range x.withMixins(t.Interface) {
		if t.Member == "" {
			break
		}
		var lines []string
		for i := range d.Members {
			m := &d.Members[i]
			if m.Name == t.Member && (m.Static == t.Static || m.Kind == "constructor") {
				lines = append(lines, "  "+m.Text+";")
				found = append(found, m)
			}
		}
		if len(lines) == 0 {
			continue
		}
		text := d.Header + "\n" + strings.Join(lines, "\n") + "\n};"
		if d.Name != t.Interface {
			text += "\n" + t.Interface + " includes " + d.Name + ";"
		}
		if !write(d, text) {
			break
		}
	}
	s := b.String()
	if len(s) > maxBytes {
		s = s[:runeCut(s, maxBytes)] + fmt.Sprintf("\n[… IDL cut at %d bytes (setting webdocs-max-doc-bytes)]", maxBytes)
	}
	if t.Member != "" && len(found) == 0 {
		return "", nil
	}
	return s, found
}

// renderWhole writes the interface's definitions, then the lines naming
// the mixins it includes, then each mixin's definitions (whose headers,
// "interface mixin Name {", say where each member comes from), until
// write reports maxBytes reached. The names come before the mixins' text
// so that an answer cut short still says which mixins there are.
func (x *idlIndex) renderWhole(name string, b *strings.Builder, write func(*IDLDefinition, string) bool, maxBytes int) {
	for _, d := range x.defs[name] {
		if !write(d, d.Text) {
			return
		}
	}
	mixins := x.includes[name]
	if len(mixins) == 0 {
		return
	}
	b.WriteString("\n")
	for _, m := range mixins {
		fmt.Fprintf(b, "%s includes %s;\n", name, m)
	}
	for _, m := range mixins {
		for _, d := range x.defs[m] {
			if b.Len() >= maxBytes || !write(d, d.Text) {
				return
			}
		}
	}
}

// withMixins returns the interface's definitions, then its mixins'.
func (x *idlIndex) withMixins(name string) []*IDLDefinition {
	out := append([]*IDLDefinition(nil), x.defs[name]...)
	for _, m := range x.includes[name] {
		out = append(out, x.defs[m]...)
	}
	return out
}

// runeCut moves n back to a UTF-8 boundary of s.
func runeCut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return n
}
