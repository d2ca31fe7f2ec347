package index

import (
	"bytes"
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

// TestStoredFormHoldsNoText: the stored form is the index without its
// text section, to the byte (OpenStored's tests check that it answers as
// the full file does).
func TestStoredFormHoldsNoText(t *testing.T) {
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
}
