package cache

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/store"
)

// Reader wraps st: Files, Blob and the Version of a ready version are
// answered from the cache layers when they can be.
func (c *Cache) Reader(st store.Reader) store.Reader { return &reader{c: c, st: st} }

type reader struct {
	c  *Cache
	st store.Reader
}

var versionCodec = codec[store.Version]{
	encode: func(v store.Version) []byte { b, _ := json.Marshal(v); return b },
	decode: func(b []byte) (v store.Version, err error) { err = json.Unmarshal(b, &v); return v, err },
	cost: func(v store.Version) int64 {
		return int64(len(v.Name) + len(v.Version) + len(v.Integrity) + len(v.Deprecated) + 64)
	},
}

// Version caches the record of a ready version for good, as Files does
// its list: explore reads it with every answer (its deprecation). A
// failed or missing version is read from st every time, since a fill
// turns it ready; none reaches here from explore, which asks only after
// Files found the version.
func (r *reader) Version(ctx context.Context, name, version string) (store.Version, error) {
	return lookup(ctx, r.c, "version:"+name+"@"+version, 0, versionCodec,
		func(ctx context.Context) (store.Version, bool, error) {
			v, err := r.st.Version(ctx, name, version)
			return v, err == nil && v.State == store.StateReady, err
		})
}

var filesCodec = codec[[]store.File]{encode: encodeFiles, decode: decodeFiles, cost: filesCost}

// Files caches the list of a ready version for good: a committed version
// never changes. ErrNotFound is not cached, so a fill is seen at once.
func (r *reader) Files(ctx context.Context, name, version string) ([]store.File, error) {
	return lookup(ctx, r.c, "files:"+name+"@"+version, 0, filesCodec,
		func(ctx context.Context) ([]store.File, bool, error) {
			files, err := r.st.Files(ctx, name, version)
			return files, err == nil && filesCost(files) <= r.c.opt.MaxListBytes, err
		})
}

// Blob caches bodies up to MaxBodyBytes by their hash. A body read back
// from Redis is only served when its sha256 matches.
func (r *reader) Blob(ctx context.Context, h store.Hash) ([]byte, error) {
	cd := codec[[]byte]{
		encode: func(b []byte) []byte { return b },
		decode: func(b []byte) ([]byte, error) {
			if sha256.Sum256(b) != h {
				return nil, fmt.Errorf("%w: body does not match its hash", errCorrupt)
			}
			return b, nil
		},
		cost: func(b []byte) int64 { return int64(len(b)) },
	}
	// The raw digest keys the local layer (no hex encoding on the hot
	// path: 3% of a warm read's CPU); lookup spells it in hex for Redis.
	return lookup(ctx, r.c, "blob:"+string(h[:]), 0, cd,
		func(ctx context.Context) ([]byte, bool, error) {
			b, err := r.st.Blob(ctx, h)
			return b, err == nil && int64(len(b)) <= r.c.opt.MaxBodyBytes, err
		})
}

// Resolver turns a version spec into an exact version; it is the
// interface explore.Resolver declares.
type Resolver interface {
	// Resolve returns an exact version, or the wrapped resolver's error.
	Resolve(ctx context.Context, name string, spec npmspec.Spec) (string, error)
}

// Resolver wraps r: a range or dist-tag resolution is reused for
// ResolveTTL (so a moved dist-tag is seen at most ResolveTTL after this
// cache, plus the upstream client's packument-ttl after the registry); an
// exact version resolves to itself for good. Errors are not cached.
func (c *Cache) Resolver(r Resolver) Resolver { return &resolver{c: c, r: r} }

type resolver struct {
	c *Cache
	r Resolver
}

var stringCodec = codec[string]{
	encode: func(s string) []byte { return []byte(s) },
	decode: func(b []byte) (string, error) { return string(b), nil },
	cost:   func(s string) int64 { return int64(len(s)) },
}

func (r *resolver) Resolve(ctx context.Context, name string, spec npmspec.Spec) (string, error) {
	ttl := r.c.opt.ResolveTTL
	if spec.Kind != npmspec.Version && ttl <= 0 {
		return r.r.Resolve(ctx, name, spec)
	}
	if spec.Kind == npmspec.Version {
		ttl = 0 // immutable
	}
	return lookup(ctx, r.c, "resolve:"+name+"@"+spec.Raw, ttl, stringCodec,
		func(ctx context.Context) (string, bool, error) {
			v, err := r.r.Resolve(ctx, name, spec)
			return v, err == nil, err
		})
}
