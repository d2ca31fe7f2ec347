package lockfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
	"go.yaml.in/yaml/v3"
)

// flowSequence is the costliest YAML per byte: one node per 2 bytes. At 4
// MiB it took yaml.v3 430 MB of heap before MaxNodes.
func flowSequence(head string, size int) []byte {
	var b bytes.Buffer
	b.WriteString(head + "x: [")
	for b.Len() < size {
		b.WriteString("a,")
	}
	b.WriteString("a]\n")
	return b.Bytes()
}

func TestTreeParsersAreBoundedByMaxNodes(t *testing.T) {
	const size = 4 << 20 // under MaxBytes: only MaxNodes refuses it
	jsonc := []byte(`{"lockfileVersion": 1, "x": [` + strings.Repeat("0,", size/2) + "]}")
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"pnpm-lock.yaml", flowSequence("lockfileVersion: '9.0'\n", size)},
		{"yarn.lock", flowSequence("__metadata: {version: 8}\n", size)},
		{"bun.lock", jsonc},
		{"upload", jsonc},
		{"yarn.lock", []byte("# yarn lockfile v1\n\na@1:\n  dependencies:\n" + strings.Repeat("    b 1\n", size/8))},
		{"yarn.lock", []byte("# yarn lockfile v1\n\n" + strings.Repeat("a@1, ", size/5) + "a@1:\n  version 1.0.0\n")},
	} {
		_, err := Parse(c.name, c.data)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "MaxNodes") {
			t.Errorf("%s of %d bytes (%.20q...): %v, want ErrTooLarge naming MaxNodes", c.name, len(c.data), c.data, err)
		}
	}
}

func TestYAMLDuplicateKeysAreInvalid(t *testing.T) {
	data := "lockfileVersion: '9.0'\npackages:\n  a@1.0.0: {}\n  b@1.0.0: {}\n  a@1.0.0: {}\n"
	if _, err := Parse("pnpm-lock.yaml", []byte(data)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "already defined") {
		t.Fatalf("duplicate key: %v, want ErrInvalid", err)
	}
}

// yamlNodes counts the nodes yaml.v3 builds for every document of data;
// false when data is not YAML.
func yamlNodes(data []byte) (int, bool) {
	n := 0
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return n, true
		}
		if err != nil {
			return 0, false
		}
		stack := []*yaml.Node{&doc}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = append(stack[:len(stack)-1], x.Content...)
			n++
		}
	}
}

// jsoncNodes counts hujson's values (a member's name is one); false when
// data is not JSONC.
func jsoncNodes(data []byte) (int, bool) {
	v, err := hujson.Parse(data)
	if err != nil {
		return 0, false
	}
	n := 0
	for range v.All() {
		n++
	}
	return n, true
}

// FuzzNodeBound checks that nodeBound is an upper bound of what yaml.v3
// and hujson build, which is what makes MaxNodes bound their memory.
func FuzzNodeBound(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.*")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil && len(data) < 1<<20 {
			f.Add(data)
		}
	}
	for _, s := range []string{"a", "- \n- \n-", "[a,a,]", "{a, b, ? c}", "a:\nb:\n", "--- a\n--- b\n...\n", "[[[]]]",
		"[a: b, c: d]", "? - a\n: - b", "&x a: *x", "a: !!str |\n  x\n", `{"a":[1,{"b":null}],}`, "a\n...\nb\n...\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		bound := nodeBound(data)
		if n, ok := yamlNodes(data); ok && n > bound {
			t.Fatalf("yaml.v3 built %d nodes for %q, over nodeBound %d", n, data, bound)
		}
		if n, ok := jsoncNodes(data); ok && n > bound {
			t.Fatalf("hujson built %d values for %q, over nodeBound %d", n, data, bound)
		}
	})
}

// TestFixturesFitMaxNodes keeps room under the default MaxNodes for
// lockfiles 30 times the largest fixture (396 packages).
func TestFixturesFitMaxNodes(t *testing.T) {
	for _, fx := range fixtures {
		data, err := os.ReadFile(filepath.Join("testdata", fx.dir, fx.file))
		if err != nil {
			t.Fatal(err)
		}
		if n := nodeBound(data); n*30 > DefaultLimits().MaxNodes {
			t.Errorf("%s/%s: nodeBound %d leaves less than 30 times its size under MaxNodes", fx.dir, fx.file, n)
		}
	}
}
