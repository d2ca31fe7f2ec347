package blobcodec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
)

// TestStreamCorrupt: a stored form that does not decode to the recorded
// size fails the read with ErrCorrupt, never a silent short body.
func TestStreamCorrupt(t *testing.T) {
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := bytes.Repeat([]byte("export const a = 1;\n"), 10_000)
	codec, data := c.Encode(body)
	if codec != Zstd {
		t.Fatal("want a zstd body")
	}
	st, err := NewStream(codec, int64(len(body)), int64(len(data)), 0, bytes.NewReader(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := iotest.TestReader(st, body); err != nil {
		t.Fatal(err)
	}
	st.Close()
	cases := map[string]func() (*Stream, error){
		"truncated": func() (*Stream, error) {
			return NewStream(Zstd, int64(len(body)), int64(len(data)/2), 0, bytes.NewReader(data[:len(data)/2]), nil)
		},
		"longer than recorded": func() (*Stream, error) {
			return NewStream(Zstd, int64(len(body)-1), int64(len(data)), 0, bytes.NewReader(data), nil)
		},
		"shorter than recorded": func() (*Stream, error) {
			return NewStream(Zstd, int64(len(body)+1), int64(len(data)), 0, bytes.NewReader(data), nil)
		},
		"garbage": func() (*Stream, error) {
			return NewStream(Zstd, 100, 100, 0, bytes.NewReader(bytes.Repeat([]byte{7}, 100)), nil)
		},
		"raw size mismatch": func() (*Stream, error) { return NewStream(Raw, 10, 9, 0, bytes.NewReader(make([]byte, 9)), nil) },
	}
	for name, open := range cases {
		t.Run(name, func(t *testing.T) {
			st, err := open()
			if err == nil {
				defer st.Close()
				_, err = io.ReadAll(st)
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestStreamLargeBodyAtDefaultLevel: a body larger than maxWindow encoded
// with the default Config streams back whole: the frames Encode writes at
// its default level declare a window the Stream accepts.
func TestStreamLargeBodyAtDefaultLevel(t *testing.T) {
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b bytes.Buffer
	for i := 0; b.Len() < 3*maxWindow; i++ {
		fmt.Fprintf(&b, "export const v%d = %d; // %x\n", i, i*i, i*7919)
	}
	body := b.Bytes()
	codec, data := c.Encode(body)
	if codec != Zstd {
		t.Fatal("want a zstd body")
	}
	st, err := NewStream(codec, int64(len(body)), int64(len(data)), 0, bytes.NewReader(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := io.ReadAll(st)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("streamed %d of %d bytes, err %v", len(got), len(body), err)
	}
}
