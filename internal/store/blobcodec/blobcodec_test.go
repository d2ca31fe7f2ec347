package blobcodec

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newCoder(t *testing.T) *Coder {
	t.Helper()
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestRoundTrip(t *testing.T) {
	random := make([]byte, 1<<16)
	rand.Read(random)
	tests := []struct {
		name  string
		body  []byte
		codec Codec
	}{
		{"empty stays raw", []byte{}, Raw},
		{"tiny stays raw", []byte("module.exports = 1;\n"), Raw},
		{"incompressible stays raw", random, Raw},
		{"text is compressed", bytes.Repeat([]byte("export function f() { return 42; }\n"), 1000), Zstd},
		{"invalid utf-8 is compressed", bytes.Repeat([]byte{0xff, 0xfe, 0x00, 'a'}, 1000), Zstd},
	}
	c := newCoder(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codec, data := c.Encode(tt.body)
			if codec != tt.codec {
				t.Fatalf("codec = %d, want %d", codec, tt.codec)
			}
			if codec == Zstd && len(data) >= len(tt.body) {
				t.Errorf("compressed %d bytes to %d", len(tt.body), len(data))
			}
			got, err := c.Decode(codec, int64(len(tt.body)), data)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.body) {
				t.Errorf("round trip changed the body")
			}
		})
	}
}

func TestDecodeCorrupt(t *testing.T) {
	c := newCoder(t)
	body := bytes.Repeat([]byte("abcdefgh"), 1000)
	codec, frame := c.Encode(body)
	if codec != Zstd {
		t.Fatalf("codec = %d, want Zstd", codec)
	}
	tests := []struct {
		name  string
		codec Codec
		size  int64
		data  []byte
	}{
		{"raw size mismatch", Raw, 3, []byte("ab")},
		{"zstd size too small", Zstd, int64(len(body)) - 1, frame},
		{"zstd size too large", Zstd, int64(len(body)) + 1, frame},
		{"zstd garbage", Zstd, 10, []byte("not a zstd frame")},
		{"unknown codec", 7, 2, []byte("ab")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Decode(tt.codec, tt.size, tt.data)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestInvalidConfig(t *testing.T) {
	for _, cfg := range []Config{{MinSize: -1}, {MinSavingPercent: 101}} {
		if c, err := New(cfg); err == nil {
			c.Close()
			t.Errorf("New(%+v) accepted an invalid config", cfg)
		}
	}
}
