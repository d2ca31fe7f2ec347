package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/mcp"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func TestToolDefinition(t *testing.T) {
	m := newMirror(t)
	for _, projectAware := range []bool{false, true} {
		t.Run(fmt.Sprint("project=", projectAware), func(t *testing.T) {
			opt := mcp.Options{}
			if projectAware {
				p, err := mcp.NewProject(t.TempDir(), 0)
				if err != nil {
					t.Fatal(err)
				}
				opt.Project = p
			}
			cs := inMemory(t, m.app.Service, opt)
			tools, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools.Tools) != 1 || tools.Tools[0].Name != "explore_npm" {
				t.Fatalf("tools = %+v, want exactly explore_npm", tools.Tools)
			}
			tool := tools.Tools[0]
			if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
				t.Errorf("annotations = %+v, want read-only", tool.Annotations)
			}
			for _, want := range []string{"'list'", "'glob'", "'grep'", "'read'", "offset", "column", "dist-tag"} {
				if !strings.Contains(tool.Description, want) {
					t.Errorf("description does not mention %s: %s", want, tool.Description)
				}
			}
			if got := strings.Contains(tool.Description, "this project locks"); got != projectAware {
				t.Errorf("description mentions the project's lock = %v, want %v", got, projectAware)
			}
			var schema struct {
				Type                 string
				Required             []string
				AdditionalProperties *bool `json:"additionalProperties"`
				Properties           map[string]struct {
					Type        string
					Enum        []string
					Description string
					Minimum     *float64
					AnyOf       []map[string]any
				}
			}
			b, _ := json.Marshal(tool.InputSchema)
			if err := json.Unmarshal(b, &schema); err != nil {
				t.Fatalf("schema %s: %v", b, err)
			}
			if n := len(b) + len(tool.Description); n > maxExploreToolBytes {
				t.Errorf("description and input schema: %d bytes, want ≤ %d", n, maxExploreToolBytes)
			}
			// The /v1/explore fields (internal/api/explore.go) but npm
			// diff's formatting options, which stay on the REST API.
			want := []string{"action", "packageName", "version", "patterns", "path", "offset", "limit", "column",
				"pattern", "caseInsensitive", "fixedStrings", "wholeWord", "include", "exclude", "contextLines",
				"maxMatches", "maxMatchesPerFile", "from", "to", "nameOnly",
				"maxBytes", "cursor", "depth", "outputMode", "sort", "project"}
			var got []string
			for k := range schema.Properties {
				got = append(got, k)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("properties = %v, want %v", got, want)
			}
			if schema.Type != "object" || !slices.Equal(schema.Required, []string{"action"}) {
				t.Errorf("type %q required %v", schema.Type, schema.Required)
			}
			if schema.AdditionalProperties == nil || *schema.AdditionalProperties {
				t.Errorf("additionalProperties = %v, want false (a misspelt field is an error, as in the API)", schema.AdditionalProperties)
			}
			if a := schema.Properties["action"]; !slices.Equal(a.Enum, []string{"list", "glob", "read", "grep", "diff"}) {
				t.Errorf("action enum = %v", a.Enum)
			}
			for name, p := range schema.Properties {
				if p.Description == "" {
					t.Errorf("property %s has no description", name)
				}
				if p.Type == "integer" && (p.Minimum == nil || *p.Minimum != 0) {
					t.Errorf("integer %s has no minimum 0", name)
				}
			}
			if len(schema.Properties["patterns"].AnyOf) != 2 {
				t.Errorf("patterns accepts %v, want a string or an array", schema.Properties["patterns"].AnyOf)
			}
		})
	}
}

func TestActionsInMemory(t *testing.T) {
	m := newMirror(t, func(c *config.Config) { c.MaxLineWidth = 10 })
	m.publishFixtures()
	cs := inMemory(t, m.app.Service, mcp.Options{})
	checkActions(t, cs)
}

// checkActions calls list, glob and read on the fixtures through cs and
// checks structured and text results; every transport runs it.
func checkActions(t *testing.T, cs *sdk.ClientSession) {
	t.Helper()
	var l explore.ListResult
	res := call(t, cs, `{"action":"list","packageName":"lib"}`)
	decode(t, res, &l)
	wantFiles := []string{"a.txt", "dist/index.d.ts", "dist/index.js", "empty", "img.png", "min.js", "package.json"}
	if l.PackageName != "lib" || l.Version != "1.0.0" || !slices.Equal(paths(l.Entries), wantFiles) || l.TotalFiles != 7 || l.Truncated ||
		!strings.HasPrefix(l.ResolvedFrom, "latest: ") {
		t.Errorf("list = %+v", l)
	}
	if txt := text(res); !strings.HasPrefix(txt, "lib@1.0.0 (latest: ") || !strings.Contains(txt, ") 7 files, ") || !strings.Contains(txt, "\na.txt (14 B)\ndist/index.{d.ts,js} (2 files, ") {
		t.Errorf("list text = %q", txt)
	}

	for _, patterns := range []string{`["dist/**/*.d.ts"]`, `"**/*.d.ts"`} {
		l = explore.ListResult{}
		decode(t, call(t, cs, `{"action":"glob","packageName":"lib","version":"^1","patterns":`+patterns+`}`), &l)
		if !slices.Equal(paths(l.Entries), []string{"dist/index.d.ts"}) || l.TotalFiles != 1 || l.ResolvedFrom != "range ^1" {
			t.Errorf("glob %s = %+v", patterns, l)
		}
	}

	var r explore.ReadResult
	res = call(t, cs, `{"action":"read","packageName":"lib","version":"1.0.0","path":"a.txt","offset":2,"limit":1}`)
	decode(t, res, &r)
	if r.Content != "     2\ttwo" || r.StartLine != 2 || r.EndLine != 2 || r.TotalLines != 3 || !r.Truncated || r.TruncatedBy != "limit" {
		t.Errorf("read a.txt 2:1 = %+v", r)
	}
	if txt := text(res); txt != "lib@1.0.0 (exact) a.txt: lines 2-2 of 3\n     2\ttwo\n"+
		`[truncated by limit; to continue, call explore_npm with {"action":"read","packageName":"lib","version":"1.0.0","path":"a.txt","offset":3,"limit":1}]` {
		t.Errorf("read text = %q", txt)
	}

	// A long line: cut at the line width, then paged by column.
	r = explore.ReadResult{}
	decode(t, call(t, cs, `{"action":"read","packageName":"lib","path":"min.js"}`), &r)
	if r.LinesCut != 1 || !strings.Contains(r.Content, "offset=1, column=11") {
		t.Errorf("read min.js = %+v", r)
	}
	var line strings.Builder
	for col := 1; col != 0; col = r.NextColumn {
		r = explore.ReadResult{}
		res = call(t, cs, fmt.Sprintf(`{"action":"read","packageName":"lib","path":"min.js","offset":1,"column":%d}`, col))
		decode(t, res, &r)
		line.WriteString(strings.TrimPrefix(r.Content, "     1\t"))
		if r.NextColumn > 0 && !strings.Contains(text(res), fmt.Sprintf(`"offset":1,"column":%d`, r.NextColumn)) {
			t.Errorf("window text does not say how to continue: %q", text(res))
		}
	}
	if want := strings.Repeat("0123456789", 3) + "é"; line.String() != want {
		t.Errorf("windows rebuilt %q, want %q", line.String(), want)
	}

	r = explore.ReadResult{}
	res = call(t, cs, `{"action":"read","packageName":"lib","path":"img.png"}`)
	decode(t, res, &r)
	if !r.Binary || r.Size != 7 || r.Content != "" || !strings.Contains(text(res), "binary file, 7 bytes") {
		t.Errorf("binary = %+v %q", r, text(res))
	}
}

func TestErrorsInMemory(t *testing.T) {
	m := newMirror(t)
	m.publishFixtures()
	checkErrors(t, inMemory(t, m.app.Service, mcp.Options{}))
}

// checkErrors checks that failures are tool errors with the API's codes;
// every transport runs it.
func checkErrors(t *testing.T, cs *sdk.ClientSession) {
	t.Helper()
	var many strings.Builder // 5,000 made-up arguments: 10 named, the rest counted
	for i := range 5000 {
		fmt.Fprintf(&many, `,"k%04d":1`, i)
	}
	cases := []struct {
		name, args string
		code, msg  string
	}{
		{"unknown field", `{"action":"list","packageName":"lib","bogus":1}`, "bad_request", "bogus"},
		{"many unknown fields", `{"action":"list","packageName":"lib"` + many.String() + `}`, "bad_request", "and 4990 more unknown fields"},
		{"missing packageName", `{"action":"list"}`, "bad_request", "packageName"},
		{"unknown action", `{"action":"cat","packageName":"lib"}`, "bad_request", "action"},
		{"grep limit", `{"action":"grep","packageName":"lib","pattern":"x","limit":2}`, "bad_request", "grep takes maxMatches, not limit"},
		{"grep path", `{"action":"grep","packageName":"lib","pattern":"x","path":"dist/client/components"}`, "bad_request", "grep has no path: use include:['dist/client/components/**']"},
		{"glob path", `{"action":"glob","packageName":"lib","patterns":"*.d.ts","path":"dist/client/components"}`, "bad_request", "use 'dist/client/components/*.d.ts'"},
		{"read pattern", `{"action":"read","packageName":"lib","path":"a.txt","pattern":"x"}`, "bad_request", "read has no pattern: to find lines, use grep"},
		{"alias", `{"action":"grep","packageName":"lib","query":"x"}`, "bad_request", `unknown field "query": did you mean pattern?`},
		{"alias by action", `{"glob":"*.js","action":"grep","packageName":"lib","pattern":"x"}`, "bad_request", `unknown field "glob": did you mean include?`},
		{"field in another case", `{"action":"list","PackageName":"lib"}`, "bad_request", `unknown field "PackageName": did you mean packageName?`},
		{"field in lower case", `{"action":"grep","packageName":"lib","pattern":"x","maxmatches":2}`, "bad_request", `unknown field "maxmatches": did you mean maxMatches?`},
		{"GNU word boundary", `{"action":"grep","packageName":"lib","pattern":"\\<Home\\>"}`, "bad_request", `use \b`},
		{"look-around", `{"action":"grep","packageName":"lib","pattern":"(?<=use)State"}`, "bad_request", "RE2 has no look-around"},
		{"backreference", `{"action":"grep","packageName":"lib","pattern":"(a)\\1"}`, "bad_request", "RE2 has no backreferences"},
		{"negative offset", `{"action":"read","packageName":"lib","path":"a.txt","offset":-1}`, "bad_request", "offset"},
		{"wrong type", `{"action":"read","packageName":"lib","path":"a.txt","limit":"ten"}`, "bad_request", "limit"},
		{"bad name", `{"action":"list","packageName":"../etc"}`, "bad_request", "packageName"},
		{"git spec", `{"action":"list","packageName":"lib","version":"git+ssh://x/y.git"}`, "bad_request", "version"},
		{"traversal", `{"action":"read","packageName":"lib","path":"../../etc/passwd"}`, "bad_request", "path"},
		{"bad glob", `{"action":"glob","packageName":"lib","patterns":["[a"]}`, "bad_request", "glob"},
		{"glob without patterns", `{"action":"glob","packageName":"lib"}`, "bad_request", "patterns"},
		{"no such package", `{"action":"list","packageName":"nope"}`, "not_found", "nope"},
		{"no such version", `{"action":"list","packageName":"lib","version":"^9"}`, "no_matching_version", `range "^9" matches none of 1 version; the highest is 1.0.0 (also latest)`},
		{"no such file", `{"action":"read","packageName":"lib","path":"b.js"}`, "not_found", "b.js"},
		{"limit over max", `{"action":"read","packageName":"lib","path":"a.txt","limit":1000000}`, "limit_exceeded", "max-read-limit"},
		{"upstream down", `{"action":"list","packageName":"down"}`, "upstream_unavailable", "500"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, tc.args)
			t.Log(text(res))
			e := toolError(t, res)
			if e.Code != tc.code || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("got %s %q, want %s containing %q", e.Code, e.Message, tc.code, tc.msg)
			}
			if !strings.HasPrefix(text(res), "error "+tc.code+": ") {
				t.Errorf("text %q does not lead with the code", text(res))
			}
			if tc.code == "upstream_unavailable" && (e.RetryAfterSeconds <= 0 || !strings.Contains(text(res), "try again in")) {
				t.Errorf("upstream failure without a retry time: %+v %q", e, text(res))
			}
		})
	}
	// null is "not given", as in the API.
	if res := call(t, cs, `{"action":"list","packageName":"lib","version":null,"patterns":null}`); res.IsError {
		t.Errorf("nulls for optional fields: %s", text(res))
	}
}

// TestGrep: grep through the tool answers the service's GrepResult and
// renders it like grep -n; every field of the request reaches the search.
func TestGrep(t *testing.T) {
	m := newMirror(t)
	m.publishFixtures()
	cs := inMemory(t, m.app.Service, mcp.Options{})
	type match struct {
		File   string
		Line   int
		Column int
		Text   string
	}
	cases := []struct {
		name, args string
		want       []match
		truncated  string
		text       string
	}{
		{"all files, binary skipped", `{"pattern":"foo","include":["*.md","a.js"]}`,
			[]match{{"a.js", 2, 1, "foo here"}, {"b.md", 1, 1, "foo"}, {"b.md", 2, 1, "food"}}, "",
			"grepme@1.0.0 (latest: no version given) grep: 3 matching lines in 2 files (2 files searched)\na.js:2:1:foo here\nb.md:1:1:foo\nb.md:2:1:food"},
		{"case-insensitive with context", `{"pattern":"foo","caseInsensitive":true,"include":"a.js","contextLines":1}`,
			[]match{{"a.js", 2, 1, "foo here"}, {"a.js", 5, 1, "FOO again"}}, "",
			"grepme@1.0.0 (latest: no version given) grep: 2 matching lines in 1 file (1 file searched)\na.js\n1-line1\n2:1:foo here\n3-line3\n4-line4\n5:1:FOO again"},
		{"fixed string", `{"pattern":"a.b","fixedStrings":true}`, []match{{"b.md", 3, 1, "a.b"}}, "", ""},
		{"regexp", `{"pattern":"a.b","exclude":"bin.dat"}`, []match{{"b.md", 3, 1, "a.b"}, {"b.md", 4, 1, "axb"}}, "", ""},
		{"whole word, exclude", `{"pattern":"foo","wholeWord":true,"exclude":["*.js","*.dat"]}`, []match{{"b.md", 1, 1, "foo"}}, "", ""},
		// Sources before docs: many.js before b.md.
		{"maxMatches", `{"pattern":"foo","maxMatches":2}`, []match{{"a.js", 2, 1, "foo here"}, {"many.js", 1, 1, "foo"}}, "maxMatches", ""},
		{"path order", `{"pattern":"foo","maxMatches":2,"sort":"path"}`, []match{{"a.js", 2, 1, "foo here"}, {"b.md", 1, 1, "foo"}}, "maxMatches", ""},
		{"maxMatchesPerFile", `{"pattern":"foo","include":"many.js","maxMatchesPerFile":1}`, []match{{"many.js", 1, 1, "foo"}}, "maxMatchesPerFile", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, `{"action":"grep","packageName":"grepme",`+tc.args[1:])
			var g explore.GrepResult
			decode(t, res, &g)
			var got []match
			for _, m := range g.Matches {
				got = append(got, match{m.File, m.Line, m.Column, m.Text})
			}
			if !slices.Equal(got, tc.want) || g.Version != "1.0.0" || g.TruncatedBy != tc.truncated || g.Truncated != (tc.truncated != "") {
				t.Errorf("matches %+v truncated %v/%q, want %+v %q", got, g.Truncated, g.TruncatedBy, tc.want, tc.truncated)
			}
			if tc.text != "" && text(res) != tc.text {
				t.Errorf("text\n%s\nwant\n%s", text(res), tc.text)
			}
			if tc.truncated != "" && !strings.Contains(text(res), "[truncated by "+tc.truncated) {
				t.Errorf("text does not say it was truncated: %s", text(res))
			}
		})
	}
	var g explore.GrepResult
	res := call(t, cs, `{"action":"grep","packageName":"grepme","pattern":"foo"}`)
	decode(t, res, &g)
	if g.FilesSkipped != 1 || len(g.Skipped) != 1 || g.Skipped[0].Path != "bin.dat" || !strings.Contains(text(res), "[not searched: bin.dat (binary)]") {
		t.Errorf("binary file: %+v %q", g, text(res))
	}
	for _, tc := range []struct{ args, msg string }{
		{`{"action":"grep","packageName":"grepme","pattern":"("}`, "("},
		{`{"action":"grep","packageName":"grepme"}`, "pattern"},
		{`{"action":"grep","packageName":"grepme","pattern":"x","include":["[a"]}`, "glob"},
	} {
		if e := toolError(t, call(t, cs, tc.args)); e.Code != "bad_request" || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%s: %+v", tc.args, e)
		}
	}
}

// TestGrepUnavailable: a service without a search engine answers a tool
// error with its own code, not an internal error.
func TestGrepUnavailable(t *testing.T) {
	cs := inMemory(t, noGrep{}, mcp.Options{})
	if e := toolError(t, call(t, cs, `{"action":"grep","packageName":"x","pattern":"y"}`)); e.Code != "grep_unavailable" || !strings.Contains(e.Message, "not available") {
		t.Errorf("grep = %+v", e)
	}
}

// noGrep is an Explorer whose grep is not wired.
type noGrep struct{ mcp.Explorer }

func (noGrep) Grep(context.Context, explore.Request) (*explore.GrepResult, error) {
	return nil, explore.ErrGrepUnavailable
}

// paths are the entries' paths.
func paths(es []explore.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

// TestGrepNoMatchSaysWhatToTry: a grep for a name the package does not
// have (an icon an agent guessed) says what each widening the request
// leaves open finds, and what else to try; an answer with matches has no
// such line.
func TestGrepNoMatchSaysWhatToTry(t *testing.T) {
	m := newMirror(t)
	m.publishFixtures()
	cs := inMemory(t, m.app.Service, mcp.Options{})
	for _, tc := range []struct{ args, want, not string }{
		{`{"pattern":"UnicornIcon"}`, "(nor with caseInsensitive: true): the name may not exist in this version. Try a shorter part of the name; or list/glob", "without include"},
		{`{"pattern":"UnicornIcon","caseInsensitive":true,"wholeWord":true,"include":"*.js"}`,
			"(nor without wholeWord, nor without include/exclude): the name may not exist in this version. Try a shorter part", "caseInsensitive: true"},
		{`{"pattern":"Food"}`, "[note: no match in 3 files as asked; with caseInsensitive: true it matches in 1 file (first b.md)]", "may not exist"},
	} {
		res := call(t, cs, `{"action":"grep","packageName":"grepme",`+tc.args[1:])
		got := text(res)
		if res.IsError || !strings.Contains(got, "[note: no match in ") || !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("%s: text\n%s\nwant a hint with %q", tc.args, got, tc.want)
		}
	}
	if got := text(call(t, cs, `{"action":"grep","packageName":"grepme","pattern":"foo"}`)); strings.Contains(got, "no match") {
		t.Errorf("an answer with matches got the no-match hint:\n%s", got)
	}
}
