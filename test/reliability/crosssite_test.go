package reliability

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// TestNoCrossSiteReads: a mirror without tokens refuses what a web page
// on another site or another localhost port can make the browser send
// (issue 11 §6): a <script src> of a package file carries no Origin, only
// Sec-Fetch-Site: cross-site (before: 200, the source ran in the page);
// a fetch from http://localhost:<other port> carries that Origin (before:
// trusted). Every answer says it is for the mirror's own origin only.
func TestNoCrossSiteReads(t *testing.T) {
	m := newMirror(t)
	m.reg.Publish("a", "1.0.0", tb.Package(t, map[string]string{"a.js": "module.exports = 'source';\n"}))
	listed := newMirror(t, func(c *config.Config) { c.AllowedOrigins = []string{"http://localhost:3000"} })
	listed.reg.Publish("a", "1.0.0", tb.Package(t, map[string]string{"a.js": "x\n"}))
	list := `{"action":"list","packageName":"a","version":"1.0.0"}`
	cases := []struct {
		name         string
		m            *mirror
		method, path string
		header       map[string]string
		want         int
	}{
		{"script src from another site", m, "GET", "/v1/npm/a@1.0.0/a.js", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"jsDelivr-style file from another site", m, "GET", "/npm/a@1.0.0/a.js", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"health from another site", m, "GET", "/healthz", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"page on another localhost port", m, "POST", "/v1/explore", map[string]string{"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"}, 403},
		{"page on 127.0.0.1, another port", m, "POST", "/v1/explore", map[string]string{"Origin": "http://127.0.0.1:9"}, 403},
		{"the mirror's own page", m, "POST", "/v1/explore", map[string]string{"Origin": "{self}", "Sec-Fetch-Site": "same-origin"}, 200},
		{"typed in the address bar", m, "GET", "/v1/npm/a@1.0.0/a.js", map[string]string{"Sec-Fetch-Site": "none"}, 200},
		{"curl", m, "GET", "/v1/npm/a@1.0.0/a.js", nil, 200},
		{"listed origin", listed, "POST", "/v1/explore", map[string]string{"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"}, 200},
		{"listed origin, cross-site", listed, "POST", "/v1/explore", map[string]string{"Origin": "http://localhost:3000", "Sec-Fetch-Site": "cross-site"}, 200},
		{"unlisted origin next to a listed one", listed, "POST", "/v1/explore", map[string]string{"Origin": "http://localhost:3001"}, 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.method == "POST" {
				body = strings.NewReader(list)
			}
			req, _ := http.NewRequestWithContext(t.Context(), tc.method, tc.m.url+tc.path, body)
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tc.header {
				req.Header.Set(k, strings.ReplaceAll(v, "{self}", tc.m.url))
			}
			resp, err := tc.m.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%d %s, want %d", resp.StatusCode, b, tc.want)
			}
			if h := resp.Header; h.Get("Cross-Origin-Resource-Policy") != "same-origin" || h.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("Cross-Origin-Resource-Policy %q, X-Content-Type-Options %q: want same-origin and nosniff on every answer",
					h.Get("Cross-Origin-Resource-Policy"), h.Get("X-Content-Type-Options"))
			}
		})
	}
}

// TestChunkedBodyOverLimitIs413: a body over max-body-bytes sent chunked
// (no Content-Length, so the limit trips mid-read) is a 413 like a sized
// one (issue 11 §7; before: 400 "not valid JSON").
func TestChunkedBodyOverLimitIs413(t *testing.T) {
	m := newMirror(t, func(c *config.Config) { c.MaxBodyBytes = 4 << 10 })
	big := `{"action":"list","packageName":"` + strings.Repeat("a", 8<<10) + `"}`
	for _, tc := range []struct{ path, body string }{
		{"/v1/explore", big},
		{"/v1/webdocs", `{"action":"search","query":"` + strings.Repeat("a", 8<<10) + `"}`},
		{"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("a", 8<<10) + `"}}`},
	} {
		for _, chunked := range []bool{false, true} {
			req, _ := http.NewRequestWithContext(t.Context(), "POST", m.url+tc.path, strings.NewReader(tc.body))
			if chunked {
				req.ContentLength, req.TransferEncoding = -1, []string{"chunked"}
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := m.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("%s (chunked %v): %d %s, want 413", tc.path, chunked, resp.StatusCode, b)
			}
		}
	}
}
