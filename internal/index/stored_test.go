package index

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"testing"
)

// storedOf returns the stored form of the index file full.
func storedOf(t testing.TB, full []byte) []byte {
	t.Helper()
	r, n, err := StoredForm(bytes.NewReader(full), int64(len(full)))
	if err != nil {
		t.Fatalf("StoredForm: %v", err)
	}
	b, err := io.ReadAll(r)
	if err != nil || int64(len(b)) != n {
		t.Fatalf("StoredForm read %d bytes (%v), said %d", len(b), err, n)
	}
	return b
}

// bodiesOf maps each doc's key (its SHA-256, as Build computes it) to
// its bytes, counting the calls.
func bodiesOf(docs []Doc, calls *int) func(string) ([]byte, error) {
	m := map[string][]byte{}
	for _, d := range docs {
		sum := sha256.Sum256(d.Data)
		m[string(sum[:])] = d.Data
	}
	return func(k string) ([]byte, error) {
		*calls++
		b, ok := m[k]
		if !ok {
			return nil, fmt.Errorf("no body %x", k)
		}
		return b, nil
	}
}

// TestAssembleRoundTrip: the stored form holds no text, and Assemble
// rebuilds the very bytes Build wrote from it and the bodies, reading
// each distinct text body once (binary and repeated bodies included).
func TestAssembleRoundTrip(t *testing.T) {
	docs := []Doc{
		{Path: "a.js", Data: []byte("function readSync() { return useRouter(); }\n" + string(bytes.Repeat([]byte("xy"), 80)) + "\nend\n")},
		{Path: "b.bin", Data: []byte("\x00\x01")},
		{Path: "c.txt", Data: []byte("\ufeffhello\r\nworld")},
		{Path: "copy.js", Data: []byte("function readSync() { return useRouter(); }\n" + string(bytes.Repeat([]byte("xy"), 80)) + "\nend\n")},
		{Path: "d/empty", Data: nil},
	}
	var buf bytes.Buffer
	st, err := Build(&buf, docs, smallBlocks())
	if err != nil {
		t.Fatal(err)
	}
	full := buf.Bytes()
	stored := storedOf(t, full)
	if want := len(full) - int(st.TextBytes); len(stored) != want {
		t.Fatalf("stored form is %d bytes, want the index's %d less its %d bytes of text", len(stored), len(full), st.TextBytes)
	}
	if bytes.Contains(stored, []byte("useRouter")) {
		t.Fatal("stored form holds text")
	}
	calls := 0
	var out bytes.Buffer
	n, err := Assemble(&out, bytes.NewReader(stored), int64(len(stored)), bodiesOf(docs, &calls))
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	if n != int64(len(full)) || !bytes.Equal(out.Bytes(), full) {
		t.Fatalf("Assemble wrote %d bytes, not the %d Build wrote", n, len(full))
	}
	if calls != 3 { // a.js (and its copy), c.txt, d/empty; never the binary
		t.Errorf("body called %d times, want 3", calls)
	}
}

// TestAssembleWrongBodies: a body that is not the one indexed (other
// bytes of the same length, another length, a missing BOM) or a missing
// body is an error, never a wrong index.
func TestAssembleWrongBodies(t *testing.T) {
	full := smallIndex(t)
	stored := storedOf(t, full)
	cases := map[string]func([]byte) ([]byte, error){
		"same length, other bytes": func(b []byte) ([]byte, error) {
			c := bytes.Clone(b)
			if len(c) > 4 {
				c[4] ^= 1
			}
			return c, nil
		},
		"longer":      func(b []byte) ([]byte, error) { return append(bytes.Clone(b), 'x'), nil },
		"bom missing": func(b []byte) ([]byte, error) { return bytes.TrimPrefix(b, utf8BOM), nil },
		"missing":     func([]byte) ([]byte, error) { return nil, errors.New("no such blob") },
	}
	docs := map[string][]byte{}
	for _, d := range []string{"function readSync() { return useRouter(); }\n" + string(bytes.Repeat([]byte("xy"), 80)) + "\nend\n", "\ufeffhello\r\nworld", ""} {
		sum := sha256.Sum256([]byte(d))
		docs[string(sum[:])] = []byte(d)
	}
	for name, alter := range cases {
		_, err := Assemble(io.Discard, bytes.NewReader(stored), int64(len(stored)), func(k string) ([]byte, error) {
			return alter(docs[k])
		})
		if err == nil {
			t.Errorf("%s: Assemble succeeded", name)
		}
	}
}

// TestAssembleCorruptStored: a damaged or truncated stored form is an
// error from Assemble (never a panic), or a file Open rejects.
func TestAssembleCorruptStored(t *testing.T) {
	full := smallIndex(t)
	stored := storedOf(t, full)
	body := func(k string) ([]byte, error) {
		for _, d := range []string{"function readSync() { return useRouter(); }\n" + string(bytes.Repeat([]byte("xy"), 80)) + "\nend\n", "\ufeffhello\r\nworld", ""} {
			if sum := sha256.Sum256([]byte(d)); string(sum[:]) == k {
				return []byte(d), nil
			}
		}
		return nil, errors.New("no such body")
	}
	check := func(what string, b []byte) {
		var out bytes.Buffer
		if _, err := Assemble(&out, bytes.NewReader(b), int64(len(b)), body); err == nil {
			if _, err := OpenBytes(out.Bytes()); err == nil {
				t.Fatalf("%s: assembled and opened", what)
			}
		}
	}
	for i := range stored {
		b := bytes.Clone(stored)
		b[i] ^= 0x5a
		check(fmt.Sprintf("byte %d changed", i), b)
	}
	for n := range stored {
		check(fmt.Sprintf("truncated to %d", n), stored[:n])
	}
}

// FuzzAssemble: Assemble never panics on any stored form.
func FuzzAssemble(f *testing.F) {
	f.Add(storedOf(f, smallIndex(f)))
	f.Fuzz(func(t *testing.T, stored []byte) {
		_, _ = Assemble(io.Discard, bytes.NewReader(stored), int64(len(stored)), func(string) ([]byte, error) {
			return []byte("hello\n"), nil
		})
	})
}
