package webdocs

import (
	"slices"
	"strings"
	"unicode"
)

// A Web IDL reader just good enough to find definitions and members by
// name and show their text. It does not type-check or build an AST: the
// @webref/idl files are guaranteed to parse with webidl2.js, so all this
// needs is to split definitions at top-level semicolons and members at
// semicolons inside the braces, and to find each one's name. The largest
// file (html.idl) is 3,173 lines; all 333 files are 1.8 MB and split in
// well under a second.

// IDLDefinition is one top-level definition of an IDL file.
type IDLDefinition struct {
	// Kind is "interface", "interface mixin", "callback interface",
	// "namespace", "dictionary", "enum", "callback", "typedef" or
	// "includes".
	Kind string
	// Name is the defined name; for "includes", the including interface.
	Name string
	// Partial is true for a "partial" definition extending another.
	Partial bool
	// Inherits is the parent interface or dictionary; for "includes", the
	// mixin.
	Inherits string
	// Spec is the shortname of the spec (the file name without .idl).
	Spec string
	// Header is the text up to and including "{": the extended
	// attributes on a line of their own, then keywords, name and
	// inheritance, whitespace collapsed.
	Header string
	// Text is the whole definition with comments removed, ending in ";".
	Text    string
	Members []IDLMember
}

// IDLMember is one member of an interface, mixin, namespace or dictionary.
type IDLMember struct {
	// Kind is "constructor", "operation", "attribute", "const", "field"
	// (a dictionary member), or "iterable", "maplike", "setlike",
	// "stringifier" for the unnamed declarations.
	Kind string
	// Name is the member's name; empty for unnamed members (getters,
	// iterable<...>, a bare stringifier).
	Name   string
	Static bool
	// Text is the member's declaration with whitespace collapsed and no
	// trailing semicolon.
	Text string
}

// IDLFile is one parsed file.
type IDLFile struct {
	Spec string
	// SpecTitle and SpecURL come from the "// Source: Title (URL)" header
	// webref writes at the top of every file.
	SpecTitle, SpecURL string
	Definitions        []IDLDefinition
}

// ParseIDL splits one IDL file into definitions. It never fails: text it
// cannot make sense of is skipped, since one odd definition must not hide
// the rest of a spec.
func ParseIDL(spec, src string) IDLFile {
	f := IDLFile{Spec: spec}
	f.SpecTitle, f.SpecURL = sourceHeader(src)
	clean := stripComments(src)
	for _, text := range splitTop(clean, ';') {
		if d, ok := parseDefinition(text); ok {
			d.Spec = spec
			f.Definitions = append(f.Definitions, d)
		}
	}
	return f
}

// sourceHeader reads "// Source: Resize Observer Module Level 1 (https://...)".
func sourceHeader(src string) (title, url string) {
	for line := range strings.Lines(src) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "//") {
			if line != "" {
				break
			}
			continue
		}
		rest, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(line, "//")), "Source:")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
			return rest[:i], rest[i+2 : len(rest)-1]
		}
		return rest, ""
	}
	return "", ""
}

// stripComments removes // and /* */ comments outside string literals.
func stripComments(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' && s[j] != '\n' {
				j++
			}
			if j < len(s) {
				j++
			}
			b.WriteString(s[i:j])
			i = j - 1
		case strings.HasPrefix(s[i:], "//"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return b.String()
			}
			i += j - 1
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return b.String()
			}
			b.WriteByte(' ')
			i += j + 3
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// splitTop splits s at sep where no (, [, { or < is open and outside
// string literals, dropping empty pieces. Each piece is trimmed.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			if j := strings.IndexByte(s[i+1:], '"'); j >= 0 {
				i += j + 1
			}
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case sep:
			if depth == 0 {
				if p := strings.TrimSpace(s[start:i]); p != "" {
					out = append(out, p)
				}
				start = i + 1
			}
		}
	}
	if p := strings.TrimSpace(s[start:]); p != "" {
		out = append(out, p)
	}
	return out
}

// cutExtAttrs removes a leading [ ... ] block.
func cutExtAttrs(s string) (attrs, rest string) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") {
		return "", s
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '(', '{':
			depth++
		case ']', ')', '}':
			depth--
			if depth == 0 {
				return s[:i+1], strings.TrimSpace(s[i+1:])
			}
		case '"':
			if j := strings.IndexByte(s[i+1:], '"'); j >= 0 {
				i += j + 1
			}
		}
	}
	return "", s // unbalanced: treat it all as the rest
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func parseDefinition(text string) (IDLDefinition, bool) {
	d := IDLDefinition{Text: strings.TrimSpace(text) + ";"}
	_, rest := cutExtAttrs(text)
	head, body, hasBody := strings.Cut(rest, "{")
	words := strings.Fields(head)
	if len(words) > 0 && words[0] == "partial" {
		d.Partial, words = true, words[1:]
	}
	if len(words) == 0 {
		return d, false
	}
	name := func(i int) string {
		if i < len(words) {
			return strings.TrimPrefix(strings.TrimSuffix(words[i], ":"), "_")
		}
		return ""
	}
	switch {
	case words[0] == "interface" && name(1) == "mixin":
		d.Kind, d.Name = "interface mixin", name(2)
	case words[0] == "callback" && name(1) == "interface":
		d.Kind, d.Name = "callback interface", name(2)
	case words[0] == "interface", words[0] == "namespace", words[0] == "dictionary", words[0] == "enum":
		d.Kind, d.Name = words[0], name(1)
	case words[0] == "callback":
		d.Kind, d.Name = "callback", strings.TrimSpace(strings.SplitN(name(1), "=", 2)[0])
	case words[0] == "typedef":
		d.Kind, d.Name = "typedef", name(len(words)-1)
	case len(words) == 3 && words[1] == "includes":
		d.Kind, d.Name, d.Inherits = "includes", name(0), name(2)
		return d, d.Name != "" && d.Inherits != ""
	default:
		return d, false
	}
	if d.Name == "" || !isIdent(d.Name) {
		return d, false
	}
	if i := strings.IndexByte(head, ':'); i >= 0 && (d.Kind == "interface" || d.Kind == "dictionary") {
		d.Inherits = strings.TrimSpace(head[i+1:])
	}
	if !hasBody {
		d.Header = collapse(rest)
		return d, true
	}
	attrs, _ := cutExtAttrs(text)
	d.Header = collapse(head) + " {"
	if attrs != "" {
		d.Header = collapse(attrs) + "\n" + d.Header
	}
	body = strings.TrimSpace(body)
	body = strings.TrimSuffix(body, "}")
	if d.Kind == "enum" {
		return d, true
	}
	for _, m := range splitTop(body, ';') {
		if mem, ok := parseMember(m, d.Kind == "dictionary"); ok {
			d.Members = append(d.Members, mem)
		}
	}
	return d, true
}

// qualifiers may precede an operation's or attribute's type.
var qualifiers = map[string]bool{
	"static": true, "getter": true, "setter": true, "deleter": true, "stringifier": true,
	"readonly": true, "inherit": true, "required": true, "async": true,
}

func parseMember(text string, dictionary bool) (IDLMember, bool) {
	_, rest := cutExtAttrs(text)
	m := IDLMember{Text: collapse(rest)}
	if m.Text == "" {
		return m, false
	}
	words := strings.Fields(m.Text)
	m.Static = words[0] == "static"
	first := strings.TrimSuffix(strings.SplitN(words[0], "<", 2)[0], "(")
	switch {
	case strings.HasPrefix(m.Text, "constructor(") || strings.HasPrefix(m.Text, "constructor ("):
		m.Kind, m.Name = "constructor", "constructor"
		return m, true
	case first == "const":
		m.Kind = "const"
		m.Name = nameBeforeDefault(m.Text)
		return m, isIdent(m.Name)
	case first == "iterable" || first == "maplike" || first == "setlike" || first == "async_iterable":
		m.Kind = strings.TrimPrefix(first, "async_")
		return m, true
	case first == "readonly" && len(words) > 1 && (strings.HasPrefix(words[1], "maplike") || strings.HasPrefix(words[1], "setlike")):
		m.Kind = strings.SplitN(words[1], "<", 2)[0]
		return m, true
	case first == "async" && len(words) > 1 && strings.HasPrefix(words[1], "iterable"):
		m.Kind = "iterable"
		return m, true
	case m.Text == "stringifier":
		m.Kind = "stringifier"
		return m, true
	}
	if slices.Contains(words, "attribute") {
		m.Kind = "attribute"
		m.Name = strings.TrimPrefix(words[len(words)-1], "_")
		return m, isIdent(m.Name)
	}
	if dictionary {
		m.Kind = "field"
		m.Name = nameBeforeDefault(m.Text)
		return m, isIdent(m.Name)
	}
	// An operation: "ReturnType name(args)". The argument list is the last
	// top-level parenthesised group; the return type may hold parentheses
	// of its own (a union).
	open := lastTopParen(m.Text)
	if open < 0 {
		return m, false
	}
	m.Kind = "operation"
	before := strings.TrimSpace(m.Text[:open])
	var kept []string
	for _, w := range strings.Fields(before) {
		if !qualifiers[w] || len(kept) > 0 {
			kept = append(kept, w)
		}
	}
	// The name is the identifier right before "(" when a type precedes it;
	// "getter any (DOMString name)" has a type but no name.
	if len(kept) >= 2 && !strings.HasSuffix(before, ")") && !strings.HasSuffix(before, ">") && !strings.HasSuffix(before, "?") {
		m.Name = strings.TrimPrefix(kept[len(kept)-1], "_")
		if !isIdent(m.Name) {
			m.Name = ""
		}
	}
	return m, true
}

// nameBeforeDefault is the last word before "=" ("long count = 3" gives
// count), "" when there is none.
func nameBeforeDefault(text string) string {
	before, _, _ := strings.Cut(text, "=")
	f := strings.Fields(before)
	if len(f) == 0 {
		return ""
	}
	return strings.TrimPrefix(f[len(f)-1], "_")
}

// lastTopParen returns the index of the "(" opening the last top-level
// parenthesised group of s, which must end s.
func lastTopParen(s string) int {
	if !strings.HasSuffix(s, ")") {
		return -1
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r == '-' && i > 0 || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}
