package webdocs

import (
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlToMarkdown renders the HTML of one section of an MDN article as
// markdown a model reads well: headings, paragraphs, fenced code with its
// language (MDN marks it as class="brush: js" or "js"), lists,
// definition lists, tables, notes as block quotes, links with MDN's
// relative paths kept (get_doc takes them). Scripts, styles, iframes
// (live samples) and images are dropped; whatever else is unknown is
// rendered as its text.
func htmlToMarkdown(src string) string {
	nodes, err := html.ParseFragment(strings.NewReader(src), &html.Node{Type: html.ElementNode, DataAtom: atom.Body, Data: "body"})
	if err != nil {
		return strings.TrimSpace(src)
	}
	var r mdRenderer
	for _, n := range nodes {
		r.block(n)
	}
	return tidy(r.b.String())
}

type mdRenderer struct {
	b strings.Builder
}

var blankLines = regexp.MustCompile(`\n[ \t]*(\n[ \t]*)+\n`)

// tidy collapses runs of blank lines and trims trailing spaces.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	s = strings.Join(lines, "\n")
	return strings.TrimSpace(blankLines.ReplaceAllString(s, "\n\n"))
}

// indent prefixes every line of s but the first with pad (the first
// gets first), leaving blank lines blank.
func indent(s, first, pad string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		switch {
		case i == 0:
			lines[i] = first + l
		case strings.TrimSpace(l) != "" || strings.TrimSpace(pad) != "":
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}

// para ends the current paragraph.
func (r *mdRenderer) para() { r.b.WriteString("\n\n") }

// nested renders n's children on their own, tidied, for a container that
// indents them (a list item, a quote, a definition).
func nested(n *html.Node) string {
	var inner mdRenderer
	inner.children(n)
	return tidy(inner.b.String())
}

func isBlock(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return false
	}
	switch n.DataAtom {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Aside, atom.Header, atom.Footer, atom.Main, atom.Nav,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Pre, atom.Ul, atom.Ol, atom.Dl, atom.Table,
		atom.Blockquote, atom.Hr, atom.Figure, atom.Details, atom.Summary, atom.Figcaption:
		return true
	}
	return false
}

func skipped(n *html.Node) bool {
	if n.Type == html.CommentNode {
		return true
	}
	if n.Type != html.ElementNode {
		return false
	}
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Iframe, atom.Noscript, atom.Template, atom.Button, atom.Img, atom.Svg, atom.Video, atom.Audio:
		return true
	}
	return false
}

// block renders n as block content.
func (r *mdRenderer) block(n *html.Node) {
	if skipped(n) {
		return
	}
	if n.Type == html.TextNode {
		r.inlineText(n.Data)
		return
	}
	if n.Type != html.ElementNode && n.Type != html.DocumentNode {
		return
	}
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		level := int(n.Data[1] - '0')
		r.para()
		r.b.WriteString(strings.Repeat("#", level) + " ")
		r.inlineChildren(n)
		r.para()
	case atom.Div, atom.Blockquote:
		if n.DataAtom == atom.Blockquote || hasClass(n, "notecard") {
			r.para()
			r.b.WriteString(indent(nested(n), "> ", "> "))
			r.para()
			return
		}
		r.para()
		r.children(n)
		r.para()
	case atom.P, atom.Section, atom.Article, atom.Aside, atom.Header, atom.Footer, atom.Main, atom.Nav,
		atom.Figure, atom.Figcaption, atom.Details, atom.Summary:
		r.para()
		r.children(n)
		r.para()
	case atom.Pre:
		r.para()
		r.b.WriteString("```" + codeLang(n) + "\n" + strings.TrimRight(textOf(n), "\n") + "\n```")
		r.para()
	case atom.Ul, atom.Ol:
		r.list(n)
	case atom.Dl:
		r.para()
		first := true
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.DataAtom {
			case atom.Dt:
				if !first {
					r.b.WriteString("\n")
				}
				first = false
				r.b.WriteString("- **")
				var inner mdRenderer
				inner.inlineChildren(c)
				r.b.WriteString(strings.TrimSpace(inner.b.String()) + "**")
			case atom.Dd:
				r.b.WriteString("\n" + indent(nested(c), "  ", "  "))
			}
		}
		r.para()
	case atom.Table:
		r.table(n)
	case atom.Hr:
		r.para()
		r.b.WriteString("---")
		r.para()
	case atom.Br:
		r.b.WriteString("\n")
	default:
		r.inline(n)
	}
}

// children renders n's children: inline nodes as text, blocks as blocks.
func (r *mdRenderer) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if isBlock(c) {
			r.block(c)
		} else {
			r.inline(c)
		}
	}
}

func (r *mdRenderer) inlineChildren(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		r.inline(c)
	}
}

// inline renders n as inline content.
func (r *mdRenderer) inline(n *html.Node) {
	if skipped(n) {
		return
	}
	switch n.Type {
	case html.TextNode:
		r.inlineText(n.Data)
		return
	case html.ElementNode:
	default:
		return
	}
	if isBlock(n) {
		r.block(n)
		return
	}
	switch n.DataAtom {
	case atom.Code, atom.Kbd, atom.Samp:
		t := strings.Join(strings.Fields(textOf(n)), " ")
		if t == "" {
			return
		}
		fence := "`"
		if strings.Contains(t, "`") {
			fence = "``"
		}
		r.b.WriteString(fence + t + fence)
	case atom.Strong, atom.B:
		r.wrap(n, "**")
	case atom.Em, atom.I:
		r.wrap(n, "*")
	case atom.A:
		href := attr(n, "href")
		var inner mdRenderer
		inner.inlineChildren(n)
		text := strings.TrimSpace(inner.b.String())
		switch {
		case href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(href, "javascript:"):
			r.b.WriteString(text)
		case text == "":
			r.b.WriteString("<" + href + ">")
		default:
			r.b.WriteString("[" + text + "](" + strings.ReplaceAll(href, " ", "%20") + ")")
		}
	case atom.Br:
		r.b.WriteString("\n")
	default:
		r.inlineChildren(n)
	}
}

func (r *mdRenderer) wrap(n *html.Node, mark string) {
	var inner mdRenderer
	inner.inlineChildren(n)
	t := inner.b.String()
	if strings.TrimSpace(t) == "" {
		r.b.WriteString(t)
		return
	}
	lead := t[:len(t)-len(strings.TrimLeft(t, " "))]
	trail := t[len(strings.TrimRight(t, " ")):]
	r.b.WriteString(lead + mark + strings.TrimSpace(t) + mark + trail)
}

// inlineText writes text with whitespace collapsed as a browser would.
func (r *mdRenderer) inlineText(s string) {
	if s == "" {
		return
	}
	cur := r.b.String()
	atBreak := cur == "" || strings.HasSuffix(cur, " ") || strings.HasSuffix(cur, "\n")
	words := strings.Fields(s)
	if len(words) == 0 {
		if !atBreak {
			r.b.WriteByte(' ')
		}
		return
	}
	if isSpace(s[0]) && !atBreak {
		r.b.WriteByte(' ')
	}
	r.b.WriteString(strings.Join(words, " "))
	if isSpace(s[len(s)-1]) {
		r.b.WriteByte(' ')
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

func (r *mdRenderer) list(n *html.Node) {
	r.para()
	i := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.DataAtom != atom.Li {
			continue
		}
		i++
		marker := "- "
		if n.DataAtom == atom.Ol {
			marker = strconv.Itoa(i) + ". "
		}
		if i > 1 {
			r.b.WriteString("\n")
		}
		r.b.WriteString(indent(nested(c), marker, strings.Repeat(" ", len(marker))))
	}
	r.para()
}

func (r *mdRenderer) table(n *html.Node) {
	var rows [][]string
	var walk func(*html.Node)
	walk = func(m *html.Node) {
		for c := m.FirstChild; c != nil; c = c.NextSibling {
			switch c.DataAtom {
			case atom.Tr:
				var row []string
				for cell := c.FirstChild; cell != nil; cell = cell.NextSibling {
					if cell.DataAtom == atom.Td || cell.DataAtom == atom.Th {
						var inner mdRenderer
						inner.inlineChildren(cell)
						t := strings.Join(strings.Fields(inner.b.String()), " ")
						row = append(row, strings.ReplaceAll(t, "|", `\|`))
					}
				}
				rows = append(rows, row)
			case atom.Thead, atom.Tbody, atom.Tfoot:
				walk(c)
			}
		}
	}
	walk(n)
	if len(rows) == 0 {
		return
	}
	width := 0
	for _, row := range rows {
		width = max(width, len(row))
	}
	if width == 0 {
		return
	}
	r.para()
	for i, row := range rows {
		for len(row) < width {
			row = append(row, "")
		}
		if i > 0 {
			r.b.WriteString("\n")
		}
		r.b.WriteString("| " + strings.Join(row, " | ") + " |")
		if i == 0 {
			r.b.WriteString("\n|" + strings.Repeat(" --- |", width))
		}
	}
	r.para()
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(m *html.Node) {
		if m.Type == html.TextNode {
			b.WriteString(m.Data)
		}
		if m.DataAtom == atom.Br {
			b.WriteByte('\n')
		}
		for c := m.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

// codeLang reads a <pre>'s language: class="brush: js notranslate" (MDN's
// older pages), class="js" or "language-js".
func codeLang(n *html.Node) string {
	class := attr(n, "class")
	if c := n.FirstChild; class == "" && c != nil && c.DataAtom == atom.Code {
		class = attr(c, "class")
	}
	if rest, ok := strings.CutPrefix(class, "brush:"); ok {
		if f := strings.Fields(rest); len(f) > 0 {
			return f[0]
		}
		return ""
	}
	for _, c := range strings.Fields(class) {
		c = strings.TrimPrefix(c, "language-")
		if c != "notranslate" && c != "example-good" && c != "example-bad" && !strings.Contains(c, "-") && len(c) <= 12 {
			return c
		}
	}
	return ""
}
