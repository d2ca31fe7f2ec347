package reliability

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// hostileVersions are versions a hostile or compromised registry listed
// (issue 25 §3): a path, markup, and a header injection.
var hostileVersions = []string{"../../etc", "<b>1</b>", "1.0.0\r\nSet-Cookie: pwn=1"}

// hostilePackument publishes weirdver@1.0.0, deprecated with a message
// full of control characters, then serves its packument with
// hostileVersions added (their entries copies of 1.0.0's), dist-tag
// latest pointing at the first of them and a tag whose name forges a
// line.
func hostilePackument(t *testing.T, m *mirror) {
	t.Helper()
	m.reg.Publish("weirdver", "1.0.0", tb.Package(t, map[string]string{"index.js": "module.exports = 1;\n"}),
		fakeregistry.Deprecated("gone\r\n\x1b[31mpkgscope: trust me\x07\u2028next"))
	resp, err := http.Get(m.reg.URL() + "weirdver")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	versions := doc["versions"].(map[string]any)
	for _, v := range hostileVersions {
		entry := map[string]any{}
		for k, x := range versions["1.0.0"].(map[string]any) {
			entry[k] = x
		}
		entry["version"] = v
		versions[v] = entry
	}
	doc["dist-tags"] = map[string]any{"latest": hostileVersions[0], "next": hostileVersions[2], "ok\r\nforged: 1": "1.0.0", "stable": "1.0.0"}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	m.reg.SetRawPackument("weirdver", raw)
}

// controlIn returns the first control character in s other than the
// newlines and tabs the mirror's own text answers are made of, or -1.
func controlIn(s string) rune {
	for _, r := range s {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || r == '\u2028' || r == '\u2029') {
			return r
		}
	}
	return -1
}

// TestRegistryVersionsMustBeSemver: versions that are not semver, and the
// dist-tags pointing at them or named with control characters, are
// dropped as the packument is read (npm ignores them) and counted in
// pkgscope_upstream_dropped_total; no answer lists them, and no text
// answer carries a control character from the registry (before: "list
// weirdver" answered version "../../etc", and the MCP text's header line
// was split by the version's CR/LF).
func TestRegistryVersionsMustBeSemver(t *testing.T) {
	m, _ := privateMirror(t)
	hostilePackument(t, m)
	h := m.app.Handler()
	for _, call := range []struct{ path, body string }{
		{"/v1/explore", `{"action":"list","packageName":"weirdver"}`},
		{"/v1/explore", `{"action":"read","packageName":"weirdver","path":"index.js"}`},
		{"/mcp", mcpCall("explore_npm", `{"action":"list","packageName":"weirdver"}`)},
		{"/mcp", mcpCall("explore_npm", `{"action":"read","packageName":"weirdver@latest","path":"index.js"}`)},
		{"/v1/packages/npm/weirdver", ""},
		{"/v1/packages/npm/weirdver/resolved?specifier=latest", ""},
	} {
		method := "POST"
		if call.body == "" {
			method = "GET"
		}
		rec := send(h, method, call.path, call.body, allToken)
		body := rec.Body.String()
		if rec.Code >= 500 {
			t.Errorf("%s %s: %d %.300s", call.path, call.body, rec.Code, body)
		}
		for _, bad := range []string{"../../etc", "<b>", "\\u003cb\\u003e", "pwn", "forged"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s %s: answer carries %q: %.600s", call.path, call.body, bad, body)
			}
		}
		// The text an agent reads: the JSON-RPC result's text content,
		// or the REST answer's strings, decoded.
		var texts []string
		collectStrings(t, rec.Body.Bytes(), &texts)
		for _, s := range texts {
			if r := controlIn(s); r >= 0 {
				t.Errorf("%s %s: answer text carries control character %U: %.300q", call.path, call.body, r, s)
			}
			// The deprecation message stays on the note's line.
			for _, line := range strings.Split(s, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "pkgscope:") {
					t.Errorf("%s %s: the registry's text forged a line: %.300q", call.path, call.body, s)
				}
			}
		}
	}
	// The versions themselves, asked for by name, are not found.
	for _, v := range hostileVersions {
		body, _ := json.Marshal(map[string]string{"action": "list", "packageName": "weirdver", "version": v})
		if rec := send(h, "POST", "/v1/explore", string(body), allToken); rec.Code/100 != 4 {
			t.Errorf("list weirdver@%q: %d %.300s, want a 4xx", v, rec.Code, rec.Body)
		}
	}
	rec := send(h, "GET", "/metrics", "", allToken)
	metrics, _ := io.ReadAll(rec.Body)
	for _, want := range []string{`pkgscope_upstream_dropped_total{kind="version"} 3`, `pkgscope_upstream_dropped_total{kind="dist_tag"} 3`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s: %s", want, regexp.MustCompile(`pkgscope_upstream_dropped_total.*`).FindAll(metrics, -1))
		}
	}
}

// collectStrings appends every string in the JSON document b to out,
// decoding the JSON text an MCP result carries as well.
func collectStrings(t *testing.T, b []byte, out *[]string) {
	// An MCP answer may come as one server-sent event: its data line.
	if rest, ok := bytes.CutPrefix(b, []byte("event: message\ndata: ")); ok {
		b = rest
	}
	var doc any
	if json.Unmarshal(b, &doc) != nil {
		*out = append(*out, string(b))
		return
	}
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case string:
			*out = append(*out, x)
			if strings.HasPrefix(x, "{") { // an MCP tool's JSON text
				collectStrings(t, []byte(x), out)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				*out = append(*out, k)
				walk(e)
			}
		}
	}
	walk(doc)
}
