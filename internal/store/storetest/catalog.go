package storetest

import (
	"slices"
	"testing"

	"github.com/pkgscope/pkgscope/internal/store"
)

// testCatalog checks Recent and Names: only ready versions, newest first,
// names matched literally (LIKE wildcards are not wildcards) and without
// regard to ASCII case, shortest first.
func testCatalog(t *testing.T, s store.Store) {
	ctx := t.Context()
	if vs, err := s.Recent(ctx, 10); err != nil || len(vs) != 0 {
		t.Fatalf("Recent on an empty store = %v, %v", vs, err)
	}
	for _, fx := range []fixture{
		newFixture("react", "19.0.0", map[string][]byte{"index.js": []byte("a")}),
		newFixture("react-dom", "19.0.0", map[string][]byte{"index.js": []byte("b")}),
		newFixture("@types/react", "19.0.1", map[string][]byte{"index.d.ts": []byte("c")}),
		newFixture("re_act", "1.0.0", map[string][]byte{"index.js": []byte("d")}),
		newFixture("react", "19.1.0", map[string][]byte{"index.js": []byte("e")}),
	} {
		commit(t, s, fx)
	}
	if err := s.MarkFailed(ctx, "reactive-failed", "1.0.0", "integrity"); err != nil {
		t.Fatal(err)
	}
	vs, err := s.Recent(ctx, 3)
	if err != nil {
		t.Fatalf("Recent: %v", err)
	}
	var got []string
	for _, v := range vs {
		if v.State != store.StateReady || v.FileCount != 1 {
			t.Errorf("Recent gave %+v, want a ready version of one file", v)
		}
		got = append(got, v.Name+"@"+v.Version)
	}
	if want := []string{"react@19.1.0", "re_act@1.0.0", "@types/react@19.0.1"}; !slices.Equal(got, want) {
		t.Errorf("Recent(3) = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		substr string
		limit  int
		want   []string
	}{
		{"react", 10, []string{"react", "react-dom", "@types/react"}},
		{"REACT", 2, []string{"react", "react-dom"}},
		{"re_act", 10, []string{"re_act"}}, // '_' is not LIKE's any-character
		{"%", 10, nil},
		{"reactive", 10, nil}, // failed versions are not listed
	} {
		names, err := s.Names(ctx, tc.substr, tc.limit)
		if err != nil {
			t.Fatalf("Names(%q): %v", tc.substr, err)
		}
		if !slices.Equal(names, tc.want) {
			t.Errorf("Names(%q, %d) = %v, want %v", tc.substr, tc.limit, names, tc.want)
		}
	}
}
