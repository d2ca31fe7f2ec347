// Package gendoc keeps generated parts of the docs in step with the code
// that generates them: a test compares the text between two markers in a
// doc with what the code writes now, and rewrites it with -update. The
// settings reference in docs/OPERATIONS.md is generated this way from the
// flag definitions (internal/config, cmd/indexer), so it cannot drift.
package gendoc

import (
	"bytes"
	"os"
	"testing"
)

// Check compares the part of the file at path between the lines
// "<!-- BEGIN name -->" and "<!-- END name -->" with want; with update
// set it writes want there instead. how says how to regenerate it.
func Check(t testing.TB, path, name, want, how string, update bool) {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- BEGIN "+name+" -->\n", "<!-- END "+name+" -->"
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s: no %q ... %q markers", path, begin, end)
	}
	if string(doc[i+len(begin):j]) == want {
		return
	}
	if !update {
		t.Fatalf("%s: the generated %s are stale; regenerate them: %s", path, name, how)
	}
	out := append(append(append([]byte{}, doc[:i+len(begin)]...), want...), doc[j:]...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
