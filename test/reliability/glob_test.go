package reliability

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// globBomb is issue 11's pattern: brace groups of stars and a long run of
// stars, 440 bytes, accepted by the glob limits. doublestar backtracked
// over every alternative and star position: seconds per pattern on a
// package of a few thousand files, 8 of them ~25 s of CPU on 20,000.
// It ends in "/top-*" so that it means the same whether a pattern
// without a slash matches basenames (ripgrep's -g) or whole paths.
var globBomb = strings.Repeat("{*,*}", 8) + strings.Repeat("*", 400) + "/top-*"

// TestGlobCostBounded sends eight glob bombs to a package of 3,000 files
// as a glob, as the REST file list's ?glob= and as grep includes: each
// answers, right, within the hostile-request deadline (on the backtracking
// matcher each took seconds, and grep said truncated:false past its
// timeout).
func TestGlobCostBounded(t *testing.T) {
	m := newMirror(t)
	files := map[string]string{"package.json": `{"name":"many"}`}
	var top []string
	for i := range 3000 {
		p := fmt.Sprintf("dist/esm/icons/icon-%d.js", i)
		if i%100 == 0 {
			p = fmt.Sprintf("top/top-%d.js", i)
			top = append(top, p)
		}
		files[p] = "export default 1;\n"
	}
	slices.Sort(top)
	m.reg.Publish("many", "1.0.0", tb.Package(t, files))
	if a := m.explore(`{"action":"grep","packageName":"many","version":"1.0.0","pattern":"x"}`); a.status != 200 {
		t.Fatalf("warming: %v", a)
	}
	bombs, _ := json.Marshal(slices.Repeat([]string{globBomb}, 8))
	q := url.Values{"glob": slices.Repeat([]string{globBomb}, 8)}
	cases := []struct {
		name, method, path, body string
		want                     []string
	}{
		{"explore glob", "POST", "/v1/explore", `{"action":"glob","packageName":"many","version":"1.0.0","patterns":` + string(bombs) + `}`, top},
		{"REST ?glob=", "GET", "/v1/npm/many@1.0.0/-/files?" + q.Encode(), "", top},
		{"grep include", "POST", "/v1/explore", `{"action":"grep","packageName":"many","version":"1.0.0","pattern":"export","maxMatches":1000,"include":` + string(bombs) + `}`, top},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := do(t.Context(), m.hc, c.method, m.url+c.path, c.body, hostileBound)
			if a.err != nil || a.status != 200 {
				t.Fatalf("%v within %s", a, hostileBound)
			}
			var res struct {
				Files   []string `json:"files"`
				Entries []struct {
					Path string `json:"path"`
				} `json:"entries"`
				Matches []struct {
					File string `json:"file"`
				} `json:"matches"`
				Truncated bool `json:"truncated"`
			}
			if err := json.Unmarshal(a.body, &res); err != nil {
				t.Fatal(err)
			}
			got := res.Files
			for _, e := range res.Entries {
				got = append(got, e.Path)
			}
			for _, mt := range res.Matches {
				got = append(got, mt.File)
			}
			if !slices.Equal(got, c.want) || res.Truncated {
				t.Errorf("selected %q (truncated %v), want %q", got, res.Truncated, c.want)
			}
		})
	}
}
