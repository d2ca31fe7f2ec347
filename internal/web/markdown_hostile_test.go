package web

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// hostileReadmes are README fragments a malicious package author would
// try, one per trick: script and data URLs spelt every way markdown and
// browsers allow (entities, case, whitespace and control characters a
// browser strips from a URL, angle brackets, reference definitions,
// images, autolinks), raw HTML as blocks and inline, SVG, and relative
// links climbing out of the package.
var hostileReadmes = map[string]string{
	"inline link":              "[x](javascript:alert(1))",
	"mixed case":               "[x](JaVaScRiPt:alert(1))",
	"entity-encoded scheme":    "[x](&#106;avascript:alert(1))",
	"hex entity colon":         "[x](javascript&#x3A;alert(1))",
	"named entity colon":       "[x](javascript&colon;alert(1))",
	"tab inside the scheme":    "[x](java&#x09;script:alert(1))",
	"newline entity":           "[x](java&#10;script:alert(1))",
	"leading space in <>":      "[x](< javascript:alert(1)>)",
	"leading control in <>":    "[x](<&#1;javascript:alert(1)>)",
	"angle-bracket dest":       "[x](<javascript:alert(1)>)",
	"backslash-escaped colon":  "[x](javascript\\:alert(1))",
	"reference link":           "[x][r]\n\n[r]: javascript:alert(1)",
	"reference with title":     "[x][r]\n\n[r]: <javascript:alert(1)> \"t\"",
	"collapsed reference":      "[r][]\n\n[r]: JAVASCRIPT:alert(1)",
	"shortcut reference":       "[r]\n\n[r]: vbscript:msgbox(1)",
	"image":                    "![x](javascript:alert(1))",
	"image reference":          "![x][i]\n\n[i]: javascript:alert(1)",
	"image of a link":          "[![x](javascript:alert(1))](javascript:alert(2))",
	"svg data image":           "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
	"svg data link":            "[x](data:image/svg+xml,<svg onload=alert(1)>)",
	"html data link":           "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
	"file link":                "[x](file:///etc/passwd)",
	"autolink":                 "<javascript:alert(1)>",
	"autolink mixed case":      "<JavaScript:alert(1)>",
	"autolink data":            "<data:text/html,alert(1)>",
	"autolink vbscript":        "<vbscript:msgbox(1)>",
	"linkify":                  "see javascript:alert(1) and www.example.com/javascript:alert(1)",
	"html block script":        "<script>alert(1)</script>",
	"html block div":           "<div onclick=\"alert(1)\">\n\n*x*\n\n</div>",
	"html block svg":           "<svg><script>alert(1)</script></svg>",
	"html block svg onload":    "<svg onload=alert(1)>",
	"html block iframe":        "<iframe src=\"javascript:alert(1)\"></iframe>",
	"html block style":         "<style>body{background:url(javascript:alert(1))}</style>",
	"html comment breakout":    "<!-- --><script>alert(1)</script> -->",
	"inline html":              "a <img src=x onerror=alert(1)> b <a href=\"javascript:alert(1)\">c</a>",
	"inline svg":               "a <svg/onload=alert(1)> b",
	"processing instruction":   "<?php echo 1; ?>\n\n<![CDATA[<script>alert(1)</script>]]>",
	"link title breakout":      "[x](https://example.com \"a\\\" onmouseover=\\\"alert(1)\")",
	"code span":                "`<script>alert(1)</script>`",
	"fenced code info":         "```\"><script>alert(1)</script>\nx\n```",
	"table cell html":          "| a |\n|---|\n| <img src=x onerror=alert(1)> |",
	"task list":                "- [x] <script>alert(1)</script>",
	"relative climb":           "[x](../../../../logout) [y](/../../v1/warm) [z](/\\evil.example)",
	"scheme-relative":          "[x](//evil.example/p) ![y](//evil.example/i.png)",
	"attribute syntax":         "# H {onclick=alert(1)}\n\n[x](y){onclick=alert(1)}",
	"entity in text":           "&lt;script&gt;alert(1)&lt;/script&gt; &#60;img src=x onerror=alert(1)&#62;",
	"nested emphasis in link":  "[*x*](javascript:alert(1) \"*t*\")",
	"percent-encoded scheme":   "[x](%6Aavascript:alert(1))",
	"null byte in scheme":      "[x](java\x00script:alert(1))",
	"unicode whitespace":       "[x](\u00a0javascript:alert(1))",
	"email autolink":           "<a@b.example\"onmouseover=\"alert(1)>",
	"footnote-like reference":  "[^1]\n\n[^1]: javascript:alert(1)",
	"link inside html inline":  "<a href=\"x\">[y](javascript:alert(1))</a>",
	"heading id clobbering":    "# constructor\n\n## __proto__",
	"long chain of brackets":   strings.Repeat("[", 5000) + "x" + strings.Repeat("](javascript:alert(1))", 10),
	"deep nesting blockquotes": strings.Repeat(">", 400) + " x",
}

// safeMarkdownTags are the only elements a rendered README may hold.
var safeMarkdownTags = map[string]bool{
	"p": true, "a": true, "em": true, "strong": true, "code": true, "pre": true, "h2": true, "h3": true,
	"h4": true, "h5": true, "h6": true, "ul": true, "ol": true, "li": true, "blockquote": true, "hr": true,
	"br": true, "table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "del": true,
	"input": true,                             // task list checkboxes, disabled
	"html":  true, "head": true, "body": true, // the parser's own wrapper
}

// TestReadmeHostileMarkdown renders each hostile README and reads the
// HTML as a browser does: no element outside safeMarkdownTags, no event
// handler or style attribute, and no link whose URL, once a browser has
// stripped what it strips (leading spaces and control characters, tabs
// and newlines anywhere) and decoded entities, runs anything: only
// http(s), mailto or a URL on this mirror.
func TestReadmeHostileMarkdown(t *testing.T) {
	for name, src := range hostileReadmes {
		out := string(renderMarkdown([]byte(src), packageLink("/browse/p@1.0.0/")))
		doc, err := html.Parse(strings.NewReader(out))
		if err != nil {
			t.Fatalf("%s: parsing the output: %v", name, err)
		}
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.ElementNode {
				if !safeMarkdownTags[n.Data] {
					t.Errorf("%s: element <%s> in %q", name, n.Data, out)
				}
				for _, a := range n.Attr {
					switch k := strings.ToLower(a.Key); {
					case strings.HasPrefix(k, "on"), k == "style", k == "srcdoc", k == "formaction":
						t.Errorf("%s: attribute %s=%q in %q", name, a.Key, a.Val, out)
					case k == "href" || k == "src" || k == "action" || k == "xlink:href":
						if !safeURL(a.Val) {
							t.Errorf("%s: %s=%q in %q", name, a.Key, a.Val, out)
						}
					}
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
	}
}

// safeURL reports whether a browser following u stays on http(s), mailto
// or this mirror: u as the HTML parser decoded it, then as the URL parser
// reads it (leading C0 controls and spaces dropped, tabs and newlines
// removed, the scheme case-folded).
func safeURL(u string) bool {
	u = strings.TrimLeft(u, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	u = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(u)
	if u == "" || strings.ContainsRune("/#?", rune(u[0])) {
		return true // this mirror, or (scheme-relative) another site over http(s)
	}
	i := strings.IndexAny(u, ":/?#")
	if i < 0 || u[i] != ':' {
		return true // a relative path
	}
	switch strings.ToLower(u[:i]) {
	case "http", "https", "mailto":
		return true
	}
	// A "scheme" holding a character no scheme may is a relative path.
	for _, r := range u[:i] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return true
		}
	}
	return false
}
