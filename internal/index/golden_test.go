package index

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenDocs is a small package holding each hazard once.
func goldenDocs() []Doc {
	bundle := minifiedBundle(5000, 9)
	place(bundle, 1200, "useRouter")
	place(bundle, 4000, "useRouter")
	return []Doc{
		{Path: "README.md", Data: []byte("# pkg\r\n\r\nUse `useRouter()` from pkg/router.\r\nNo trailing newline")},
		{Path: "dist/index.min.js", Data: bundle},
		{Path: "lib/router.js", Data: []byte("'use strict';\nfunction useRouter() {\n  return readSync(path);\n}\nfunction readFileSync(p) {}\nexports.useRouter = useRouter;\n")},
		{Path: "data.json", Data: []byte(`{"name":"pkg","keywords":["router","Router","ROUTER"],"main":"lib/router.js"}`)},
		{Path: "logo.png", Data: []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR useRouter")},
		{Path: "latin1.txt", Data: []byte("r\xe9sum\xe9 router\n")},
		{Path: "bom.js", Data: []byte("\ufeffimport { useRouter } from './router';\n")},
	}
}

type goldenCase struct {
	Name   string
	Query  Query
	Window int `json:",omitempty"`
}

var goldenCases = []goldenCase{
	{Name: "literal", Query: Query{Pattern: "useRouter"}},
	{Name: "regex", Query: Query{Pattern: `function\s+\w+Sync`}},
	{Name: "case-insensitive", Query: Query{Pattern: "router", CaseInsensitive: true}},
	{Name: "whole-word", Query: Query{Pattern: "router", WholeWord: true}},
	{Name: "fixed-strings", Query: Query{Pattern: "useRouter()", FixedStrings: true}},
	{Name: "context", Query: Query{Pattern: "readSync", ContextLines: 2}},
	{Name: "long-line-window", Query: Query{Pattern: "useRouter"}, Window: 40},
	{Name: "per-file-cap", Query: Query{Pattern: "o", MaxMatchesPerFile: 1}},
	{Name: "max-matches", Query: Query{Pattern: "e", MaxMatches: 3}},
	{Name: "crlf-anchor", Query: Query{Pattern: `router\.\r$`}},
	{Name: "invalid-utf8", Query: Query{Pattern: `r.sum.`}},
	{Name: "filter", Query: Query{Pattern: "useRouter", Filter: func(p string) bool { return strings.HasPrefix(p, "lib/") }}},
	{Name: "no-match", Query: Query{Pattern: "zzzzzz"}},
}

// TestGolden compares whole results, in JSON, with testdata/golden.
// Run with -update to rewrite them after a deliberate change.
func TestGolden(t *testing.T) {
	ix := buildBytes(t, goldenDocs(), DefaultBuildLimits())
	var out bytes.Buffer
	for _, c := range goldenCases {
		lim := DefaultSearchLimits()
		if c.Window > 0 {
			lim.MaxLineWindow = c.Window
		}
		res, err := ix.Search(context.Background(), c.Query, lim)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		b, err := json.MarshalIndent(struct {
			Case   goldenCase
			Result Result
		}{c, res}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
		out.WriteString("\n")
	}
	path := filepath.Join("testdata", "golden", "search.json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		got := filepath.Join(t.TempDir(), "search.json")
		os.WriteFile(got, out.Bytes(), 0o644)
		t.Fatalf("results differ from %s; diff %s %s, or run go test -update after checking", path, path, got)
	}
}
