package blobcodec

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"go.uber.org/goleak"

	"github.com/pkgscope/pkgscope/internal/store"
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
	for _, cfg := range []Config{{MinSize: -1}, {MinSavingPercent: 101}, {Workers: -1}} {
		if c, err := New(cfg); err == nil {
			c.Close()
			t.Errorf("New(%+v) accepted an invalid config", cfg)
		}
	}
}

// EncodeEach must hand fn every body in order, each encoded as Encode
// would, with frames that stay intact after later encodes (they are
// encoded into reused buffers and copied out).
func TestEncodeEachInOrder(t *testing.T) {
	var blobs []store.Blob
	for i := range 300 {
		var body []byte
		switch i % 3 {
		case 0:
			body = bytes.Repeat(fmt.Appendf(nil, "export const v%d = %d;\n", i, i), 1+i*7)
		case 1:
			body = make([]byte, 100+i*13)
			rand.Read(body)
		default:
			body = fmt.Appendf(nil, "%d", i) // under MinSize
		}
		blobs = append(blobs, store.Blob{Hash: store.HashOf(body), Data: body})
	}
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d workers", workers), func(t *testing.T) {
			c, err := New(Config{Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			type got struct {
				b     store.Blob
				codec Codec
				data  []byte
			}
			var all []got
			err = c.EncodeEach(context.Background(), blobs, func(b store.Blob, codec Codec, data []byte) error {
				all = append(all, got{b, codec, data})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != len(blobs) {
				t.Fatalf("fn called %d times for %d blobs", len(all), len(blobs))
			}
			for i, g := range all {
				if g.b.Hash != blobs[i].Hash {
					t.Fatalf("result %d is blob %x, want %x: out of order", i, g.b.Hash[:4], blobs[i].Hash[:4])
				}
				if wantCodec, _ := c.Encode(blobs[i].Data); g.codec != wantCodec {
					t.Errorf("blob %d: codec %d, Encode says %d", i, g.codec, wantCodec)
				}
				body, err := c.Decode(g.codec, int64(len(blobs[i].Data)), g.data)
				if err != nil || !bytes.Equal(body, blobs[i].Data) {
					t.Fatalf("blob %d does not decode to its body (err %v)", i, err)
				}
			}
		})
	}
}

// An error from fn stops EncodeEach: fn is not called again, the error is
// returned, and no compressing goroutine outlives the call (goleak).
func TestEncodeEachStopsAtFirstError(t *testing.T) {
	c, err := New(Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	blobs := make([]store.Blob, 100)
	for i := range blobs {
		body := bytes.Repeat([]byte{byte(i)}, 10_000)
		blobs[i] = store.Blob{Hash: store.HashOf(body), Data: body}
	}
	stop := errors.New("insert failed")
	calls := 0
	err = c.EncodeEach(context.Background(), blobs, func(store.Blob, Codec, []byte) error {
		calls++
		if calls == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 5 {
		t.Fatalf("err = %v after %d calls, want %v after 5", err, calls, stop)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = c.EncodeEach(ctx, blobs, func(store.Blob, Codec, []byte) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v with a cancelled context, want context.Canceled", err)
	}
}

// Each of EncodeEach's workers keeps the buffer it encodes into across
// garbage collections (a pooled buffer went with each one), and what it
// returns is a copy, not that buffer.
func TestEncodeEachWorkersKeepTheirScratch(t *testing.T) {
	c, err := New(Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := bytes.Repeat([]byte("export const a = 1;\n"), 4096)
	var frame []byte
	encode := func() {
		err := c.EncodeEach(context.Background(), []store.Blob{{Hash: store.HashOf(body), Data: body}},
			func(_ store.Blob, codec Codec, data []byte) error {
				if codec != Zstd {
					t.Fatalf("codec %d, want Zstd", codec)
				}
				frame = data
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
	}
	encode()
	runtime.GC()
	runtime.GC()
	sp := <-c.workers
	c.workers <- sp
	if cap(*sp) < len(frame) {
		t.Fatalf("the worker's scratch holds %d bytes after a GC, want at least the %d-byte frame", cap(*sp), len(frame))
	}
	if unsafe.SliceData(*sp) == unsafe.SliceData(frame) {
		t.Errorf("EncodeEach returned its worker's scratch buffer, which the next body overwrites")
	}
	first := *sp
	encode()
	if unsafe.SliceData(*sp) != unsafe.SliceData(first) {
		t.Errorf("the worker grew a new scratch buffer for the same body")
	}
}
