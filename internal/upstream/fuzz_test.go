package upstream

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/npmrc"
	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// FuzzPackument serves arbitrary bytes as a registry's packument answer.
// The client must never panic; it answers either a packument of the name
// asked for, whose version keys match their entries, or one of its error
// kinds, and never ErrNotFound (the answer was a 200).
func FuzzPackument(f *testing.F) {
	for _, s := range []string{
		`{"name":"p","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"version":"1.0.0","dist":{"tarball":"http://r/p/-/p-1.0.0.tgz","integrity":"sha512-x"}}}}`,
		`{"name":"p","versions":{"2.0.0":{"version":"9.9.9"}}}`,
		`{"name":"q"}`,
		`{}`, `null`, `[]`, `{"versions":[1,2]}`, `<html>502</html>`,
		`{"name":"p","versions":{"1.0.0":{"dist":{"unpackedSize":-1,"fileCount":1e99}}}}`,
		`{"name":"p","dist-tags":{"latest":{"x":1}}}`,
		`{"name":"p"` + strings.Repeat(" ", 100),
	} {
		f.Add([]byte(s))
	}
	var body atomic.Pointer[[]byte]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(*body.Load())
	}))
	defer srv.Close()
	npm, err := npmrc.Load(f.TempDir(), func(k string) string {
		if k == "npm_config_registry" {
			return srv.URL + "/"
		}
		return ""
	})
	if err != nil {
		f.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	f.Fuzz(func(t *testing.T, data []byte) {
		body.Store(&data)
		// A new client each time: nothing cached, the breaker closed.
		c := New(npm, Config{MaxPackumentBytes: 64 << 10, RequestTimeout: 5 * time.Second}, hc)
		p, err := c.Packument(context.Background(), "p")
		if err != nil {
			var ue *unavailable.Error
			if errors.Is(err, ErrNotFound) || (!errors.As(err, &ue) && !errors.Is(err, ErrTooLarge)) {
				t.Fatalf("err = %v (%T), want *unavailable.Error or ErrTooLarge", err, err)
			}
			return
		}
		if p.Name != "p" {
			t.Fatalf("packument of %q accepted for p", p.Name)
		}
		for v, pv := range p.Versions {
			if pv.Version != v {
				t.Fatalf("version key %q holds %q", v, pv.Version)
			}
		}
	})
}

// FuzzVerify checks SRI and shasum parsing never panics and never passes
// bytes no digest vouches for: when verify accepts, some digest of the
// data really is in dist.integrity or dist.shasum.
func FuzzVerify(f *testing.F) {
	data := []byte("tarball bytes")
	s512 := sha512.Sum512(data)
	s1 := sha1.Sum(data)
	f.Add(data, "sha512-"+base64.StdEncoding.EncodeToString(s512[:]), "")
	f.Add(data, "sha1-"+base64.StdEncoding.EncodeToString(s1[:])+" sha512-AAAA", hex.EncodeToString(s1[:]))
	f.Add(data, "", hex.EncodeToString(s1[:]))
	f.Add(data, "md5-xxx sha512-"+base64.RawStdEncoding.EncodeToString(s512[:])+"?opt", "zz")
	f.Add([]byte{}, "sha256-", " ")
	f.Fuzz(func(t *testing.T, data []byte, integrity, shasum string) {
		err := verify(data, Dist{Integrity: integrity, Shasum: shasum})
		if err != nil {
			if !errors.Is(err, ErrIntegrity) {
				t.Fatalf("err = %v, want ErrIntegrity", err)
			}
			return
		}
		d512, d384, d256, d1 := sha512.Sum512(data), sha512.Sum384(data), sha256.Sum256(data), sha1.Sum(data)
		vouched := false
		for _, d := range [][]byte{d512[:], d384[:], d256[:], d1[:]} {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
				if strings.Contains(integrity, enc.EncodeToString(d)) {
					vouched = true
				}
			}
		}
		if strings.Contains(strings.ToLower(shasum), hex.EncodeToString(d1[:])) {
			vouched = true
		}
		if !vouched {
			t.Fatalf("verify accepted %q with integrity %q, shasum %q", data, integrity, shasum)
		}
	})
}
