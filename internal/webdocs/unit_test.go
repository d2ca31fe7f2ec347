package webdocs

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseDocPath(t *testing.T) {
	for _, tc := range []struct {
		in, slug, locale string
		err              string
	}{
		{in: "/en-US/docs/Web/API/ResizeObserver", slug: "Web/API/ResizeObserver", locale: "en-US"},
		{in: "  /en-us/docs/Web/API/ResizeObserver/  ", slug: "Web/API/ResizeObserver", locale: "en-us"},
		{in: "https://developer.mozilla.org/en-US/docs/Web/CSS/gap#syntax", slug: "Web/CSS/gap", locale: "en-US"},
		{in: "https://developer.mozilla.org/docs/Web/API/ResizeObserver", slug: "Web/API/ResizeObserver", locale: "en-US"}, // BCD's mdn_url
		{in: "http://localhost:5042/en-US/docs/Web/API/Element/append/index.json", slug: "Web/API/Element/append", locale: "en-US"},
		{in: "/fr/docs/Web/API/ResizeObserver", slug: "Web/API/ResizeObserver", locale: "fr"},
		{in: "/pt-BR/docs/Web/API/Element?x=1", slug: "Web/API/Element", locale: "pt-BR"},
		{in: "Web/API/ResizeObserver", slug: "Web/API/ResizeObserver", locale: "en-US"},
		{in: "/en-US/docs/Web/CSS/:has", slug: "Web/CSS/:has", locale: "en-US"},
		{in: "/en-US/docs/Web/API/Window%2Ffetch", slug: "Web/API/Window/fetch", locale: "en-US"},
		{in: "", err: "missing"},
		{in: "/en-US/blog/some-post", err: "outside /docs"},
		{in: "/", err: "outside /docs"},
		{in: "/en-US/docs/", err: "no page"},
		{in: "/en-US/docs/Web/../../etc", err: "segment"},
		{in: "ftp://host/en-US/docs/Web", err: "http(s)"},
		{in: "/en-US/docs/Web\x00API", err: "control"},
	} {
		slug, locale, err := parseDocPath(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseDocPath(%q) = %q, %v; want an error about %q", tc.in, slug, err, tc.err)
			}
			continue
		}
		if err != nil || slug != tc.slug || locale != tc.locale {
			t.Errorf("parseDocPath(%q) = %q %q %v, want %q %q", tc.in, slug, locale, err, tc.slug, tc.locale)
		}
	}
}

func FuzzParseDocPath(f *testing.F) {
	for _, s := range []string{"/en-US/docs/Web/API/X", "https://h/docs/A/B#c", "Web/CSS/gap", "/x/docs/../a", "%zz", "/docs//a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		slug, _, err := parseDocPath(in)
		if err != nil {
			return
		}
		if slug == "" || strings.HasPrefix(slug, "/") || strings.HasSuffix(slug, "/") {
			t.Fatalf("parseDocPath(%q) = %q: empty or slash-bounded slug", in, slug)
		}
		if slices.Contains(strings.Split(slug, "/"), "..") {
			t.Fatalf("parseDocPath(%q) = %q: holds ..", in, slug)
		}
	})
}

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		in        string
		tokens    []string
		subwordsW []string
	}{
		{"ResizeObserver", []string{"resizeobserver"}, []string{"resize", "observer"}},
		{"Element: innerHTML property", []string{"element", "innerhtml", "property"}, []string{"inner", "html"}},
		{"HTMLElement", []string{"htmlelement"}, []string{"html", "element"}},
		{"css.properties.column-gap", []string{"css", "properties", "column", "gap"}, nil},
		{"WebGL2RenderingContext", []string{"webgl2renderingcontext"}, []string{"web", "gl", "2", "rendering", "context"}},
		{"<video>", []string{"video"}, nil},
	} {
		if got := tokenize(tc.in); !slices.Equal(got, tc.tokens) {
			t.Errorf("tokenize(%q) = %q, want %q", tc.in, got, tc.tokens)
		}
		if got := subwords(tc.in); !slices.Equal(got, tc.subwordsW) {
			t.Errorf("subwords(%q) = %q, want %q", tc.in, got, tc.subwordsW)
		}
	}
}

func TestValidKey(t *testing.T) {
	for k, want := range map[string]bool{
		"api.ResizeObserver": true, "css.properties.-webkit-box-reflect": true, "javascript.builtins.Array.@@iterator": true,
		"api.CSS.escape_static": true, "css.types.$": true, "": false, ".api": false, "api.": false, "api..X": false,
		"api.Resize Observer": false, "api/ResizeObserver": false, "<script>": false,
	} {
		if got := validKey(k); got != want {
			t.Errorf("validKey(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestHTMLToMarkdown(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"paragraph with code and link",
			`<p>The <strong><code>ResizeObserver</code></strong> interface reports changes to <a href="/en-US/docs/Web/API/Element">an <code>Element</code></a>.</p>`,
			"The **`ResizeObserver`** interface reports changes to [an `Element`](/en-US/docs/Web/API/Element)."},
		{"code block keeps its language and lines",
			`<pre class="brush: js notranslate">const ro = new ResizeObserver(cb);
ro.observe(el);
</pre>`,
			"```js\nconst ro = new ResizeObserver(cb);\nro.observe(el);\n```"},
		{"definition list",
			`<dl><dt><code>callback</code></dt><dd><p>Called on resize.</p></dd></dl>`,
			"- **`callback`**\n  Called on resize."},
		{"nested list",
			`<ul><li>one</li><li>two<ul><li>inner</li></ul></li></ul>`,
			"- one\n- two\n\n  - inner"},
		{"ordered list", `<ol><li>a</li><li>b</li></ol>`, "1. a\n2. b"},
		{"note as a quote", `<div class="notecard note"><p><strong>Note:</strong> careful.</p></div>`, "> **Note:** careful."},
		{"table", `<table><thead><tr><th>Box</th><th>Meaning</th></tr></thead><tbody><tr><td><code>a|b</code></td><td>x</td></tr></tbody></table>`,
			"| Box | Meaning |\n| --- | --- |\n| `a\\|b` | x |"},
		{"scripts, iframes and images dropped", `<p>a<script>alert(1)</script><iframe src="x"></iframe><img src="i.png" alt="pic">b</p>`, "ab"},
		{"fragment links become text", `<p>See <a href="#syntax">Syntax</a>.</p>`, "See Syntax."},
		{"headings", `<h3 id="x">Sub <code>part</code></h3><p>t</p>`, "### Sub `part`\n\nt"},
	} {
		if got := htmlToMarkdown(tc.in); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func FuzzHTMLToMarkdown(f *testing.F) {
	for _, s := range []string{
		`<p>a <code>b</code> <a href="/x">c</a></p>`, `<pre class="brush: css">a{}</pre>`, `<ul><li><ol><li>x</li></ol></li></ul>`,
		`<table><tr><td>1</td></tr></table>`, `<div class="notecard"><dl><dt>t</dt><dd>d</dd></dl></div>`, `<p>unclosed <b>bold`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := htmlToMarkdown(in)
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of valid input %q: %q", in, out)
		}
	})
}
