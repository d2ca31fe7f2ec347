package mcp

import (
	"encoding/json"
	"github.com/pkgscope/pkgscope/internal/explore"
	"reflect"
	"slices"
	"testing"
)

// FuzzDecodeArguments checks that any arguments either decode into an
// Input the schema allows (a known action, non-negative numbers) that
// survives a round trip, or fail with an input error — never a panic.
// Seeds: the f.Add calls.
func FuzzDecodeArguments(f *testing.F) {
	for _, s := range []string{
		`{"action":"list","packageName":"react"}`,
		`{"action":"glob","packageName":"@types/node","version":"^20","patterns":"**/*.d.ts"}`,
		`{"action":"glob","packageName":"x","patterns":["a","!b"]}`,
		`{"action":"read","packageName":"x","path":"a.js","offset":3,"limit":10,"column":7}`,
		`{"action":"grep","packageName":"x","pattern":"a|b","caseInsensitive":true,"include":["*.js"],"exclude":"*.map","contextLines":2,"maxMatches":5,"maxMatchesPerFile":1}`,
		`{"action":"list","packageName":"x","version":null}`,
		`{"action":"read","packageName":"x","offset":-1}`,
		`{"action":"cat"}`, `[]`, `null`, ``, `{"action":1e400}`, `{"patterns":[1]}`,
	} {
		f.Add([]byte(s))
	}
	tl := newTool(nil, Options{}.withDefaults())
	f.Fuzz(func(t *testing.T, raw []byte) {
		in, err := tl.decode(raw)
		if err != nil {
			if in != nil {
				t.Fatalf("input %+v with error %v", in, err)
			}
			return
		}
		if !slices.Contains(Actions, in.Action) {
			t.Fatalf("accepted action %q", in.Action)
		}
		if in.Offset < 0 || in.Limit < 0 || in.Column < 0 || (in.ContextLines != nil && *in.ContextLines < 0) || in.MaxMatches < 0 || in.MaxMatchesPerFile < 0 {
			t.Fatalf("accepted a negative number: %+v", in)
		}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := tl.decode(b)
		if err != nil || !reflect.DeepEqual(normalize(in), normalize(again)) {
			t.Fatalf("round trip of %s: %+v, %v; want %+v", b, again, err, in)
		}
	})
}

// normalize makes empty lists nil: omitempty drops them on the way out.
func normalize(in *Input) Input {
	c := *in
	for _, l := range []*explore.StringList{&c.Patterns, &c.Include, &c.Exclude} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	return c
}
