package web

import (
	"bytes"
	"html/template"
	"net/url"
	"path"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/pkgscope/pkgscope/internal/pkgpath"
)

// Markdown from packages (READMEs) and MDN is untrusted: it is rendered
// with goldmark's defaults, which drop raw HTML ("<!-- raw HTML omitted
// -->") and javascript:/vbscript:/data: links, and then:
//   - an image becomes a link to it: a remote image would tell its host
//     who reads the page (and the page's CSP, img-src 'self', blocks it
//     anyway); a package's own image is a file link like any other;
//   - a link within the document's site points at this mirror's page for
//     it (linkBase): a package's file, an MDN page;
//   - links to other sites carry rel="nofollow noopener noreferrer";
//   - headings move one level down, so the page keeps its one <h1>;
//   - a README whose parse would cost too much (markdownCostly) is shown
//     as text.

// markdownTransformer applies the rules above to a parsed document.
type markdownTransformer struct {
	// linkBase maps a relative link to a page: "" leaves it as written.
	linkBase func(dest string) string
}

func (t markdownTransformer) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	var images []*ast.Image
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			n.Level = min(n.Level+1, 6)
		case *ast.Image:
			images = append(images, n)
		case *ast.Link:
			n.Destination = t.dest(n.Destination)
			t.rel(n, n.Destination)
		case *ast.AutoLink:
			n.SetAttributeString("rel", []byte("nofollow noopener noreferrer"))
		}
		return ast.WalkContinue, nil
	})
	for _, img := range images {
		l := ast.NewLink()
		l.Destination = t.dest(img.Destination)
		l.Title = img.Title
		t.rel(l, l.Destination)
		for c := img.FirstChild(); c != nil; {
			next := c.NextSibling()
			l.AppendChild(l, c)
			c = next
		}
		if l.ChildCount() == 0 {
			l.AppendChild(l, ast.NewString([]byte("image")))
		}
		img.Parent().ReplaceChild(img.Parent(), img, l)
	}
}

// dest maps a relative link to the package's page for it.
func (t markdownTransformer) dest(d []byte) []byte {
	s := string(d)
	if t.linkBase == nil || s == "" || strings.HasPrefix(s, "#") || strings.HasPrefix(s, "//") {
		return d
	}
	if u, err := url.Parse(s); err != nil || u.Scheme != "" || u.Host != "" {
		return d
	}
	return []byte(t.linkBase(s))
}

// rel marks a link to another site.
func (markdownTransformer) rel(n ast.Node, dest []byte) {
	if u, err := url.Parse(string(dest)); err == nil && (u.Scheme != "" || u.Host != "") {
		n.SetAttributeString("rel", []byte("nofollow noopener noreferrer"))
	}
}

// renderMarkdown renders src as sanitised HTML (the rules above);
// linkBase maps relative links, nil leaves them.
func renderMarkdown(src []byte, linkBase func(string) string) template.HTML {
	if markdownCostly(src) {
		return plainText(src)
	}
	md := goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify, extension.TaskList),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(markdownTransformer{linkBase: linkBase}, 1000))),
	)
	var b bytes.Buffer
	if err := md.Convert(src, &b); err != nil {
		// goldmark fails only when writing fails; a bytes.Buffer does
		// not. Shown as text, never as markup.
		return plainText(src)
	}
	return template.HTML(b.String()) //nolint:gosec // goldmark without WithUnsafe: raw HTML and dangerous URLs dropped
}

// plainText is src shown as it is written, escaped.
func plainText(src []byte) template.HTML {
	return template.HTML("<pre>" + template.HTMLEscapeString(string(src)) + "</pre>") //nolint:gosec // escaped
}

// Goldmark's work grows with the square of shapes a package author
// controls. Measured on a 100 KiB README (PageBytes, the most a page
// renders) on the shared 2-core machine: 100,000 nested '>' on one line
// took 11.5 s of CPU and gave 2.7 MB of HTML (past the README cache's
// 1 MiB entry, so every view paid it again); 25,600 unclosed "[x](" on
// one line 7.1 s ("[](" 5.6 s, "![a](" 3.7 s), as each opener scans to
// the line's end for a destination. Such a README is shown as text.
const (
	// maxMarkdownNesting is the most containers (block quotes, list
	// items) one line may open: 5,000 took 0.55 s; READMEs nest a few.
	maxMarkdownNesting = 64
	// maxLinkScan bounds the sum, over lines, of the line's link openers
	// ("](") times its length: 2.6e9 took 7.1 s, so this is about 0.2 s,
	// while a line of 40 badge links (4 KB) costs 320,000.
	maxLinkScan = 1 << 26
)

// markdownCostly reports whether rendering src would cost past the
// bounds above; it reads each line once.
func markdownCostly(src []byte) bool {
	var scan int64
	for line := range bytes.Lines(src) {
		if nesting(line) > maxMarkdownNesting {
			return true
		}
		if scan += int64(bytes.Count(line, []byte("]("))) * int64(len(line)); scan > maxLinkScan {
			return true
		}
	}
	return false
}

// nesting counts the containers a line's start opens: '>' quote markers
// and list markers ("-", "*", "+" or a number and "." or ")", then a
// space), among the spaces between them.
func nesting(line []byte) int {
	n := 0
	for i := 0; i < len(line); {
		switch c := line[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '>':
			n++
			i++
		case (c == '-' || c == '*' || c == '+') && i+1 < len(line) && (line[i+1] == ' ' || line[i+1] == '\t'):
			n++
			i += 2
		case c >= '0' && c <= '9':
			j := i
			for j < len(line) && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			if j+1 >= len(line) || (line[j] != '.' && line[j] != ')') || (line[j+1] != ' ' && line[j+1] != '\t') {
				return n
			}
			n++
			i = j + 2
		default:
			return n
		}
	}
	return n
}

// packageLink maps a README's relative link to the package's file page:
// "docs/api.md#x" under base "/browse/p@1.0.0/" is that file's page.
func packageLink(base string) func(string) string {
	return func(dest string) string {
		p, frag, _ := strings.Cut(dest, "#")
		p, _, _ = strings.Cut(p, "?")
		clean := path.Clean("/" + p)
		if clean == "/" {
			clean = ""
		}
		out := base + pkgpath.Escape(strings.TrimPrefix(clean, "/"))
		if frag != "" {
			out += "#" + frag
		}
		return out
	}
}

// docLink maps an MDN page's link (/en-US/docs/Web/API/Node) to the docs
// page for it; other paths are left as written.
func docLink(dest string) string {
	if strings.HasPrefix(dest, "/") && strings.Contains(dest, "/docs/") {
		p, frag, _ := strings.Cut(dest, "#")
		out := "/docs/page?path=" + url.QueryEscape(p)
		if frag != "" {
			out += "#" + frag
		}
		return out
	}
	return dest
}
