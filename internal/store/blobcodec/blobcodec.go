// Package blobcodec compresses file bodies for both stores. A stored body is
// (codec, data): codec Raw keeps the bytes as they are, codec Zstd holds one
// zstd frame. Both stores share this package so that a body written by one
// reads back identically through the other, and so the choice of when to
// compress is made in one place.
package blobcodec

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/pkgscope/pkgscope/internal/store"
)

// Codec identifies how a stored body is encoded. Its values are persisted
// (blobs.codec); never renumber them.
type Codec int16

// Persisted codec values.
const (
	// Raw is a body stored as is.
	Raw Codec = 0
	// Zstd is a body stored as a single zstd frame.
	Zstd Codec = 1
)

// Config says when and how hard to compress. A zero field takes its
// default.
type Config struct {
	// Level is the zstd encoder level. Default zstd.SpeedFastest (about
	// zstd's level 1): ingest is CPU-bound on compression, and a cold
	// grep waits for the ingest. On next@16.4.6's 192 MB of bodies it
	// took 1.72 s of CPU against SpeedDefault's 3.08 s (three runs each,
	// interleaved) for 54.1 MB stored instead of 50.1 MB (+8%); the
	// better levels cost 2-3x SpeedDefault's time for a few percent.
	Level zstd.EncoderLevel
	// MinSize is the smallest body worth trying to compress, in bytes.
	// Default 64: a zstd frame has 6-18 bytes of header and bodies this
	// small (index.js re-exports, empty LICENSE stubs) rarely shrink.
	MinSize int
	// MinSavingPercent is the least saving, in percent of the body size,
	// for which the compressed form is kept; otherwise the body is stored
	// raw so reads skip the decode. Default 5: already-compressed files
	// (PNG, WOFF2, .gz) come out of zstd within a percent or two of
	// their size.
	MinSavingPercent int
	// Workers is how many bodies the Coder compresses at once, across
	// every write of its store (EncodeEach). Default GOMAXPROCS:
	// compression was ~50% of the CPU of a cold ingest of next@16.4.6,
	// and one worker left the other core to gunzip alone.
	Workers int
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{Level: zstd.SpeedFastest, MinSize: 64, MinSavingPercent: 5, Workers: runtime.GOMAXPROCS(0)}
}

// withDefaults fills zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	c.Level = cmp.Or(c.Level, d.Level)
	c.MinSize = cmp.Or(c.MinSize, d.MinSize)
	c.MinSavingPercent = cmp.Or(c.MinSavingPercent, d.MinSavingPercent)
	c.Workers = cmp.Or(c.Workers, d.Workers)
	return c
}

// Coder encodes and decodes bodies. It holds one zstd encoder and one
// decoder; their EncodeAll and DecodeAll are safe for concurrent use, so a
// store keeps a single Coder for its lifetime.
type Coder struct {
	cfg Config
	enc *zstd.Encoder
	dec *zstd.Decoder
	// workers holds Workers tokens; EncodeEach takes one per body it
	// compresses, so at most Workers compress at once, however many
	// writes run. A token is the scratch buffer its worker encodes into:
	// kept for the Coder's life, where a pooled one went with each
	// garbage collection and was grown again (3% of a cold ingest of
	// next@16.4.6's CPU).
	workers chan *[]byte
	scratch sync.Pool // of *[]byte, for Encode
}

// New returns a Coder for cfg (zero fields take their defaults).
func New(cfg Config) (*Coder, error) {
	cfg = cfg.withDefaults()
	if cfg.MinSize < 0 || cfg.MinSavingPercent < 0 || cfg.MinSavingPercent > 100 || cfg.Workers < 0 {
		return nil, fmt.Errorf("blobcodec: invalid config %+v", cfg)
	}
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(cfg.Level),
		// The sha256 key already checks the body; the frame CRC would
		// be 4 more bytes per blob for nothing.
		zstd.WithEncoderCRC(false),
	)
	if err != nil {
		return nil, fmt.Errorf("blobcodec: new zstd encoder: %w", err)
	}
	dec, err := zstd.NewReader(nil,
		// Decode into a buffer of exactly the recorded size and never
		// grow it, so a corrupt frame cannot allocate without bound.
		zstd.WithDecodeAllCapLimit(true),
	)
	if err != nil {
		enc.Close()
		return nil, fmt.Errorf("blobcodec: new zstd decoder: %w", err)
	}
	c := &Coder{cfg: cfg, enc: enc, dec: dec, workers: make(chan *[]byte, cfg.Workers)}
	for range cfg.Workers {
		c.workers <- new([]byte)
	}
	return c, nil
}

// maxScratch is the largest scratch buffer kept for the next Encode: a
// frame of a bigger body gets a buffer of its own.
const maxScratch = 4 << 20

// Encode returns how to store body: either (Raw, body) or (Zstd, frame).
// It compresses only bodies of at least MinSize bytes and keeps the frame
// only when it saves at least MinSavingPercent.
func (c *Coder) Encode(body []byte) (Codec, []byte) {
	sp, _ := c.scratch.Get().(*[]byte)
	if sp == nil {
		sp = new([]byte)
	}
	codec, data := c.encodeWith(body, sp)
	c.scratch.Put(sp)
	return codec, data
}

// encodeWith is Encode with *sp as its scratch buffer, which it keeps
// when it is at most maxScratch.
func (c *Coder) encodeWith(body []byte, sp *[]byte) (Codec, []byte) {
	if len(body) < c.cfg.MinSize {
		return Raw, body
	}
	limit := len(body) - len(body)*c.cfg.MinSavingPercent/100
	// The frame is encoded into a reused buffer and copied out at its
	// size: a fresh buffer of limit bytes was cleared for every body
	// (9% of a cold ingest's CPU) and held about 4x the frame until the
	// write.
	out := c.enc.EncodeAll(body, (*sp)[:0])
	codec, data := Raw, body
	if len(out) < limit {
		codec, data = Zstd, slices.Clone(out)
	}
	if cap(out) <= maxScratch {
		*sp = out
	}
	return codec, data
}

// EncodeEach encodes every blob's body with up to Workers compressing at
// once, and calls fn with each result in the order of blobs (so a store
// writes in its key order) as soon as it and those before it are ready:
// fn's writes overlap the compression of the bodies after it. At most
// 2*Workers results wait for fn at a time. It stops at the first error
// of fn or of ctx and returns it.
func (c *Coder) EncodeEach(ctx context.Context, blobs []store.Blob, fn func(b store.Blob, codec Codec, data []byte) error) error {
	type result struct {
		codec Codec
		data  []byte
		done  chan struct{}
	}
	results := make([]result, len(blobs))
	for i := range results {
		results[i].done = make(chan struct{})
	}
	window := make(chan struct{}, 2*c.cfg.Workers) // results encoded or encoding, not yet given to fn
	quit := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(quit)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range blobs {
			select {
			case window <- struct{}{}:
			case <-quit:
				return
			}
			var sp *[]byte
			select {
			case sp = <-c.workers:
			case <-quit:
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i].codec, results[i].data = c.encodeWith(blobs[i].Data, sp)
				c.workers <- sp
				close(results[i].done)
			}()
		}
	}()
	for i := range results {
		if err := ctx.Err(); err != nil {
			return err
		}
		select {
		case <-results[i].done:
		case <-ctx.Done():
			return ctx.Err()
		}
		r := &results[i]
		if err := fn(blobs[i], r.codec, r.data); err != nil {
			return err
		}
		r.data = nil
		<-window
	}
	return nil
}

// ErrCorrupt reports a stored body that does not decode to its recorded
// size. It is store.ErrCorruptBody.
var ErrCorrupt = store.ErrCorruptBody

// Decode returns the body stored as (codec, data) whose uncompressed size
// is size. It returns an error wrapping ErrCorrupt when the data does not
// decode to exactly size bytes.
func (c *Coder) Decode(codec Codec, size int64, data []byte) ([]byte, error) {
	switch codec {
	case Raw:
		if int64(len(data)) != size {
			return nil, fmt.Errorf("%w: raw body is %d bytes, want %d", ErrCorrupt, len(data), size)
		}
		return data, nil
	case Zstd:
		out, err := c.dec.DecodeAll(data, make([]byte, 0, size))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		if int64(len(out)) != size {
			return nil, fmt.Errorf("%w: body decodes to %d bytes, want %d", ErrCorrupt, len(out), size)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%w: unknown codec %d", ErrCorrupt, codec)
	}
}

// Close releases the encoder and decoder.
func (c *Coder) Close() {
	c.enc.Close()
	c.dec.Close()
}
