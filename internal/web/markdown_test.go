package web

import (
	"strings"
	"testing"
)

// TestMarkdownDropsWhatCouldRunOrTrack: a README is untrusted. Raw HTML,
// script URLs and remote images never reach the page; relative links
// point at the package's files; headings leave the page its one <h1>.
func TestMarkdownDropsWhatCouldRunOrTrack(t *testing.T) {
	src := "# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n" +
		"[click](javascript:alert(3)) [api](docs/api.md#use) [site](https://example.com/x)\n\n" +
		"![badge](https://badge.example/ci.svg) ![logo](./logo.png)\n\nsee https://example.org/y\n"
	out := string(renderMarkdown([]byte(src), packageLink("/browse/p@1.0.0/")))
	for _, bad := range []string{"<script", "onerror", "javascript:", "<img", "<h1"} {
		if strings.Contains(out, bad) {
			t.Errorf("rendered README holds %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{
		"<h2>Title</h2>",
		`<a href="/browse/p@1.0.0/docs/api.md#use">api</a>`,
		`<a href="https://example.com/x" rel="nofollow noopener noreferrer">site</a>`,
		`<a href="https://badge.example/ci.svg" rel="nofollow noopener noreferrer">badge</a>`,
		`<a href="/browse/p@1.0.0/logo.png">logo</a>`,
		`rel="nofollow noopener noreferrer">https://example.org/y</a>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered README lacks %s:\n%s", want, out)
		}
	}
}

// TestDocLinksStayOnTheMirror: an MDN page's links to other MDN pages
// open the mirror's docs page for them.
func TestDocLinksStayOnTheMirror(t *testing.T) {
	out := string(renderMarkdown([]byte("[Node](/en-US/docs/Web/API/Node#props)"), docLink))
	if want := `<a href="/docs/page?path=%2Fen-US%2Fdocs%2FWeb%2FAPI%2FNode#props">Node</a>`; !strings.Contains(out, want) {
		t.Errorf("got %s, want %s", out, want)
	}
}

func TestReadmeAndPrerelease(t *testing.T) {
	if f, ok := readme(files("lib/README.md", "README", "readme.md", "index.js")); !ok || f.Path != "readme.md" {
		t.Errorf("readme picked %q %v, want readme.md", f.Path, ok)
	}
	if _, ok := readme(files("lib/README.md")); ok {
		t.Error("a README in a folder is not the package's")
	}
	for v, want := range map[string]bool{"1.0.0": false, "4.0.0-canary.3": true, "1.0.0+build-7": false, "2.0.0-rc.1+x": true} {
		if prerelease(v) != want {
			t.Errorf("prerelease(%q) = %v", v, !want)
		}
	}
}
