package jsdelivr_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/jsdelivr"
	"github.com/pkgscope/pkgscope/internal/pkgpath"
	"github.com/pkgscope/pkgscope/internal/store"
)

var goodHash = base64.StdEncoding.EncodeToString(make([]byte, 32))

// TestStoreFilesRefusesHostileListings: a listing is refused whole when
// any entry is not what jsDelivr documents, since its paths become lookups
// in explore and its hashes checks of the CDN's bytes.
func TestStoreFilesRefusesHostileListings(t *testing.T) {
	cases := []struct {
		name string
		file jsdelivr.FlatFile
	}{
		{"relative name", jsdelivr.FlatFile{Name: "a.js", Hash: goodHash}},
		{"traversal", jsdelivr.FlatFile{Name: "/../etc/passwd", Hash: goodHash}},
		{"unclean", jsdelivr.FlatFile{Name: "/a//b.js", Hash: goodHash}},
		{"dot segment", jsdelivr.FlatFile{Name: "/./a.js", Hash: goodHash}},
		{"backslash", jsdelivr.FlatFile{Name: `/a\b.js`, Hash: goodHash}},
		{"root", jsdelivr.FlatFile{Name: "/", Hash: goodHash}},
		{"hash not base64", jsdelivr.FlatFile{Name: "/a.js", Hash: "!!"}},
		{"hash not sha256", jsdelivr.FlatFile{Name: "/a.js", Hash: base64.StdEncoding.EncodeToString(make([]byte, 20))}},
		{"negative size", jsdelivr.FlatFile{Name: "/a.js", Hash: goodHash, Size: -1}},
	}
	for _, tc := range cases {
		l := jsdelivr.Listing{Files: []jsdelivr.FlatFile{{Name: "/ok.js", Hash: goodHash}, tc.file}}
		if files, err := l.StoreFiles(); err == nil {
			t.Errorf("%s: accepted as %+v", tc.name, files)
		}
	}
	dup := jsdelivr.Listing{Files: []jsdelivr.FlatFile{{Name: "/a.js", Hash: goodHash}, {Name: "/a.js", Hash: goodHash}}}
	if _, err := dup.StoreFiles(); err == nil {
		t.Error("duplicate path accepted")
	}
}

func storeFiles(paths ...string) []store.File {
	var fs []store.File
	for _, p := range paths {
		fs = append(fs, store.File{Path: p, Size: int64(len(p)), Hash: store.HashOf([]byte(p))})
	}
	return fs
}

func TestFlatAndTreeOrder(t *testing.T) {
	files := storeFiles("README.md", "a.js", "dist/b/x.js", "dist/a.js", "dist/c/y.js", "Z/z.js")
	var names []string
	for _, f := range jsdelivr.Flat(files) {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, " "); got != "/Z/z.js /dist/b/x.js /dist/c/y.js /dist/a.js /README.md /a.js" {
		t.Errorf("flat = %s", got)
	}
	b, err := json.Marshal(jsdelivr.Tree(storeFiles("dist/b/x.js", "dist/a.js", "README.md")))
	if err != nil {
		t.Fatal(err)
	}
	h := func(p string) string { return jsdelivr.HashString(store.HashOf([]byte(p))) }
	want := `[{"type":"directory","name":"dist","files":[` +
		`{"type":"directory","name":"b","files":[{"type":"file","name":"x.js","hash":"` + h("dist/b/x.js") + `","size":11}]},` +
		`{"type":"file","name":"a.js","hash":"` + h("dist/a.js") + `","size":9}]},` +
		`{"type":"file","name":"README.md","hash":"` + h("README.md") + `","size":9}]`
	if string(b) != want {
		t.Errorf("tree =\n%s\nwant\n%s", b, want)
	}
}

func TestDefaultFile(t *testing.T) {
	have := map[string]bool{"dist/jquery.js": true, "dist/jquery.min.js": true, "lib/index.js": true, "style.css": true, "main.mjs": true}
	has := func(p string) bool { return have[p] }
	cases := []struct{ pkg, want string }{
		{`{"main":"dist/jquery.js"}`, "/dist/jquery.min.js"}, // minified sibling preferred
		{`{"main":"./dist/jquery.min.js"}`, "/dist/jquery.min.js"},
		{`{"main":"lib/index"}`, "/lib/index.js"}, // extension added
		{`{"jsdelivr":"style.css","main":"lib/index.js"}`, "/style.css"},
		{`{"browser":{"./x":false},"main":"lib/index.js"}`, "/lib/index.js"}, // browser map ignored
		{`{"main":"main.mjs"}`, "/main.mjs"},
		{`{"main":"missing.js"}`, ""},
		{`{"main":"../../etc/passwd"}`, ""},
		{`{"main":42}`, ""},
		{`{}`, ""},
		{`not json`, ""},
	}
	for _, tc := range cases {
		got := jsdelivr.DefaultFile([]byte(tc.pkg), has)
		if (got == nil) != (tc.want == "") || (got != nil && *got != tc.want) {
			t.Errorf("DefaultFile(%s) = %v, want %q", tc.pkg, got, tc.want)
		}
	}
}

// FuzzStoreFiles: whatever a listing holds, StoreFiles either refuses it
// or returns clean, unique paths in strict byte order with sha256 hashes.
func FuzzStoreFiles(f *testing.F) {
	f.Add(`{"type":"npm","name":"a","version":"1.0.0","default":null,"files":[{"name":"/a.js","hash":"` + goodHash + `","size":1}]}`)
	f.Add(`{"files":[{"name":"/b/c.js","hash":"` + goodHash + `","size":0},{"name":"/a","hash":"` + goodHash + `","size":3}]}`)
	f.Add(`{"files":[{"name":"/../x","hash":"","size":-1}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		var l jsdelivr.Listing
		if json.Unmarshal([]byte(doc), &l) != nil {
			return
		}
		files, err := l.StoreFiles()
		if err != nil {
			return
		}
		for i, fl := range files {
			if c, err := pkgpath.Clean(fl.Path); err != nil || c != fl.Path {
				t.Fatalf("unclean path %q accepted", fl.Path)
			}
			if i > 0 && files[i-1].Path >= fl.Path {
				t.Fatalf("paths not in strict byte order: %q, %q", files[i-1].Path, fl.Path)
			}
			if fl.Size < 0 {
				t.Fatalf("negative size accepted: %+v", fl)
			}
		}
	})
}
