package upstream

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/unavailable"
)

// version fetches the packument of name and returns one version's entry.
func (e *env) version(t *testing.T, name, ver string) PackumentVersion {
	t.Helper()
	p, err := e.c.Packument(context.Background(), name)
	if err != nil {
		t.Fatalf("Packument(%s): %v", name, err)
	}
	v, ok := p.Versions[ver]
	if !ok {
		t.Fatalf("%s has no version %s", name, ver)
	}
	return v
}

// fetchAll downloads a tarball whole and verifies it, as a caller that
// wants its bytes does.
func fetchAll(ctx context.Context, c *Client, name string, v PackumentVersion) ([]byte, error) {
	d, err := c.Tarball(ctx, name, v)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	data, err := io.ReadAll(d)
	if err != nil {
		return nil, err
	}
	if err := d.Verify(); err != nil {
		return nil, err
	}
	return data, nil
}

// verify checks data against dist as a Download does.
func verify(data []byte, dist Dist) error {
	c, err := newChecker(dist)
	if err != nil {
		return err
	}
	c.Write(data)
	return c.check()
}

func TestTarballIntegrity(t *testing.T) {
	tests := []struct {
		name    string
		publish func(e *env, data []byte)
		wantErr error
	}{
		{"sha512 integrity", func(e *env, data []byte) { e.reg.Publish("@s/p", "1.0.0", data) }, nil},
		{"sha1 shasum only", func(e *env, data []byte) {
			e.reg.Publish("@s/p", "1.0.0", data, fakeregistry.WithoutIntegrity())
		}, nil},
		{"wrong integrity", func(e *env, data []byte) {
			other := sha512.Sum512([]byte("other bytes"))
			e.reg.Publish("@s/p", "1.0.0", data, fakeregistry.WithIntegrity("sha512-"+base64.StdEncoding.EncodeToString(other[:])))
		}, ErrIntegrity},
		{"wrong shasum", func(e *env, data []byte) {
			// 1.0.0's shasum vouches for other bytes than its URL serves.
			e.reg.Publish("@s/p", "0.9.0", []byte("other bytes"))
			e.reg.Publish("@s/p", "1.0.0", []byte("announced bytes"), fakeregistry.WithoutIntegrity(),
				fakeregistry.WithTarballURL(e.reg.URL()+"@s/p/-/p-0.9.0.tgz"))
		}, ErrIntegrity},
		{"empty integrity falls back to shasum", func(e *env, data []byte) {
			e.reg.Publish("@s/p", "1.0.0", data, fakeregistry.WithIntegrity(""))
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			data := tgz(t, "index.js")
			tc.publish(e, data)
			got, err := fetchAll(context.Background(), e.c, "@s/p", e.version(t, "@s/p", "1.0.0"))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Tarball err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("Tarball = %d bytes, %v; want the published %d bytes", len(got), err, len(data))
			}
			if n := e.reg.TarballDownloads("@s/p", "1.0.0"); n != 1 {
				t.Errorf("downloads = %d, want 1", n)
			}
		})
	}
}

func TestTarballWithoutAnyChecksumIsRefused(t *testing.T) {
	e := newEnv(t, Config{})
	e.reg.Publish("p", "1.0.0", tgz(t))
	v := e.version(t, "p", "1.0.0")
	v.Dist.Integrity, v.Dist.Shasum = "", ""
	if _, err := fetchAll(context.Background(), e.c, "p", v); !errors.Is(err, ErrIntegrity) {
		t.Fatalf("err = %v, want ErrIntegrity", err)
	}
}

func TestVerify(t *testing.T) {
	data := []byte("tarball bytes")
	sri := func(algo string, sum []byte) string { return algo + "-" + base64.StdEncoding.EncodeToString(sum) }
	s512 := sha512.Sum512(data)
	s384 := sha512.Sum384(data)
	s256 := sha256.Sum256(data)
	s1 := sha1.Sum(data)
	bad512 := sha512.Sum512([]byte("x"))
	bad256 := sha256.Sum256([]byte("x"))
	bad1 := sha1.Sum([]byte("x"))
	good1hex := fmt.Sprintf("%x", s1)
	tests := []struct {
		name string
		dist Dist
		ok   bool
	}{
		{"sha512", Dist{Integrity: sri("sha512", s512[:])}, true},
		{"sha384", Dist{Integrity: sri("sha384", s384[:])}, true},
		{"sha256", Dist{Integrity: sri("sha256", s256[:])}, true},
		{"sha1 as SRI", Dist{Integrity: sri("sha1", s1[:])}, true},
		{"with options", Dist{Integrity: sri("sha512", s512[:]) + "?foo"}, true},
		{"unpadded base64", Dist{Integrity: strings.TrimRight(sri("sha512", s512[:]), "=")}, true},
		{"strongest decides: sha512 wrong, sha1 right", Dist{Integrity: sri("sha512", bad512[:]) + " " + sri("sha1", s1[:])}, false},
		{"strongest decides: sha512 right, sha256 wrong", Dist{Integrity: sri("sha256", bad256[:]) + "\t" + sri("sha512", s512[:])}, true},
		{"any entry of the strongest algorithm", Dist{Integrity: sri("sha512", bad512[:]) + " " + sri("sha512", s512[:])}, true},
		{"integrity beats shasum", Dist{Integrity: sri("sha512", bad512[:]), Shasum: good1hex}, false},
		{"shasum", Dist{Shasum: good1hex}, true},
		{"shasum upper case", Dist{Shasum: strings.ToUpper(good1hex)}, true},
		{"shasum wrong", Dist{Shasum: fmt.Sprintf("%x", bad1)}, false},
		{"shasum not hex", Dist{Shasum: "zz"}, false},
		{"unknown algorithm falls back to shasum", Dist{Integrity: "md5-1B2M2Y8AsgTpgAmY7PhCfg==", Shasum: good1hex}, true},
		{"unknown algorithm, no shasum", Dist{Integrity: "md5-1B2M2Y8AsgTpgAmY7PhCfg=="}, false},
		{"truncated digest is ignored", Dist{Integrity: "sha512-AAAA", Shasum: good1hex}, true},
		{"garbage integrity, no shasum", Dist{Integrity: "sha512-!!!"}, false},
		{"nothing", Dist{}, false},
	}
	for _, tc := range tests {
		err := verify(data, tc.dist)
		if tc.ok && err != nil {
			t.Errorf("%s: %v, want ok", tc.name, err)
		}
		if !tc.ok && !errors.Is(err, ErrIntegrity) {
			t.Errorf("%s: err = %v, want ErrIntegrity", tc.name, err)
		}
	}
}

func TestTarballSSRF(t *testing.T) {
	e := newEnv(t, Config{})
	other := fakeregistry.New(t) // another loopback port
	data := tgz(t)
	other.Publish("p", "1.0.0", data)
	e.reg.Publish("p", "1.0.0", data, fakeregistry.WithTarballURL(other.URL()+"p/-/p-1.0.0.tgz"))
	v := e.version(t, "p", "1.0.0")
	if _, err := fetchAll(context.Background(), e.c, "p", v); !errors.Is(err, ErrTarballURL) {
		t.Fatalf("tarball on another port: err = %v, want ErrTarballURL", err)
	}
	if n := other.TarballDownloads("p", "1.0.0"); n != 0 {
		t.Errorf("the other server was contacted %d times", n)
	}

	for _, raw := range []string{
		"file:///etc/passwd",
		"gopher://" + hostOf(t, e.reg.URL()) + "/",
		"http://user:pw@" + hostOf(t, e.reg.URL()) + "/p/-/p-1.0.0.tgz",
		"/p/-/p-1.0.0.tgz",
		"://bad",
	} {
		v := v
		v.Dist.Tarball = raw
		if _, err := fetchAll(context.Background(), e.c, "p", v); !errors.Is(err, ErrTarballURL) {
			t.Errorf("tarball %q: err = %v, want ErrTarballURL", raw, err)
		}
	}
}

func TestTarballOnAllowedHostGetsNoToken(t *testing.T) {
	reg := fakeregistry.New(t)
	cdn := fakeregistry.New(t)
	e := newEnvFor(t, reg, reg.URL(), Config{AllowedTarballHosts: []string{hostOf(t, cdn.URL())}},
		nerf(reg.URL())+":_authToken=s3cret")
	data := tgz(t)
	cdn.Publish("p", "1.0.0", data)
	reg.Publish("p", "1.0.0", data, fakeregistry.WithTarballURL(cdn.URL()+"p/-/p-1.0.0.tgz"))
	got, err := fetchAll(context.Background(), e.c, "p", e.version(t, "p", "1.0.0"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Tarball from allowed host: %d bytes, %v", len(got), err)
	}
	if a := cdn.LastAuthorization(); a != "" {
		t.Errorf("allowed host received Authorization %q; the token belongs to the registry only", a)
	}
}

func TestTarballRedirectLeavingAllowedHostsIsRefused(t *testing.T) {
	target := fakeregistry.New(t)
	target.Publish("p", "1.0.0", tgz(t))
	redirector := httptest.NewServer(http.RedirectHandler(target.URL()+"p/-/p-1.0.0.tgz", http.StatusFound))
	t.Cleanup(redirector.Close)
	e := newEnv(t, Config{AllowedTarballHosts: []string{redirector.URL}})
	e.reg.Publish("p", "1.0.0", tgz(t), fakeregistry.WithTarballURL(redirector.URL+"/p.tgz"))
	_, err := fetchAll(context.Background(), e.c, "p", e.version(t, "p", "1.0.0"))
	if !errors.Is(err, ErrTarballURL) {
		t.Fatalf("err = %v, want ErrTarballURL", err)
	}
	if n := target.TarballDownloads("p", "1.0.0"); n != 0 {
		t.Errorf("redirect target was contacted %d times", n)
	}
}

func TestTarballFailures(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		setup func(e *env)
		check func(t *testing.T, err error)
	}{
		{"404", Config{}, func(e *env) {}, isNotFound},
		{"500", Config{}, func(e *env) { e.reg.Fail("p", 500, "") }, isUnavailable(500, 30*time.Second, "")},
		{"429", Config{}, func(e *env) { e.reg.Fail("p", 429, "3") }, isUnavailable(429, 3*time.Second, "")},
		{"timeout", Config{TarballTimeout: 50 * time.Millisecond}, func(e *env) { e.reg.Hold("p") },
			isUnavailable(0, 30*time.Second, "timed out")},
		{"too large", Config{MaxTarballBytes: 10}, func(e *env) {},
			func(t *testing.T, err error) { isA(t, err, ErrTooLarge) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.cfg)
			e.reg.Publish("p", "1.0.0", tgz(t))
			v := e.version(t, "p", "1.0.0")
			if tc.name == "404" {
				v.Dist.Tarball = e.reg.URL() + "p/-/p-9.9.9.tgz"
			}
			tc.setup(e)
			_, err := fetchAll(context.Background(), e.c, "p", v)
			if err == nil {
				t.Fatal("want an error")
			}
			tc.check(t, err)
		})
	}
}

func TestTarballCallerCancel(t *testing.T) {
	e := newEnv(t, Config{})
	e.reg.Publish("p", "1.0.0", tgz(t))
	v := e.version(t, "p", "1.0.0")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := fetchAll(ctx, e.c, "p", v)
	var ue *unavailable.Error
	if !errors.Is(err, context.Canceled) || errors.As(err, &ue) {
		t.Fatalf("err = %v, want the caller's context.Canceled", err)
	}
}

func TestHostSet(t *testing.T) {
	s := newHostSet([]string{"cdn.invalid", "Mirror.invalid:8443", "https://blob.invalid/path", "http://ported.invalid:8080/", " "})
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://cdn.invalid/x", true},
		{"https://CDN.invalid:443/x", true},
		{"http://cdn.invalid/x", true},
		{"https://cdn.invalid:8443/x", false},
		{"https://mirror.invalid:8443/x", true},
		{"https://mirror.invalid/x", false},
		{"https://blob.invalid/other", true},
		{"http://ported.invalid:8080/x", true},
		{"http://ported.invalid/x", false},
		{"https://evil.invalid/x", false},
	}
	for _, tc := range tests {
		u, _ := url.Parse(tc.url)
		hp, _ := hostPort(u)
		if got := s.allows(u, hp); got != tc.ok {
			t.Errorf("allows(%s) = %v, want %v", tc.url, got, tc.ok)
		}
	}
}

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// hostEnv publishes p@1.0.0, data, with its tarball on h, an allowed
// host serving data.
func hostEnv(t *testing.T, data []byte, h *fakeregistry.TarballHost, cfg Config) (*env, PackumentVersion) {
	t.Helper()
	cfg.AllowedTarballHosts = []string{h.Host()}
	e := newEnv(t, cfg)
	e.reg.Publish("p", "1.0.0", data, fakeregistry.WithTarballURL(h.URL()))
	return e, e.version(t, "p", "1.0.0")
}

// TestDownloadVerifiesWhatTheReaderLeft: a reader that stops early (as
// ingest stops at the archive's end marker) still has every byte checked:
// Verify reads the rest.
func TestDownloadVerifiesWhatTheReaderLeft(t *testing.T) {
	data := tgz(t, "index.js")
	for _, tc := range []struct {
		name string
		opt  []fakeregistry.PublishOption
		want error
	}{
		{"right bytes", nil, nil},
		{"wrong tail", []fakeregistry.PublishOption{fakeregistry.WithIntegrity(sriOf(append(data[:len(data)-1:len(data)-1], data[len(data)-1]^1)))}, ErrIntegrity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			e.reg.Publish("p", "1.0.0", data, tc.opt...)
			d, err := e.c.Tarball(context.Background(), "p", e.version(t, "p", "1.0.0"))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if _, err := io.ReadFull(d, make([]byte, 10)); err != nil {
				t.Fatal(err)
			}
			if err := d.Verify(); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("Verify after 10 of %d bytes = %v, want %v", len(data), err, tc.want)
			}
		})
	}
}

func sriOf(b []byte) string {
	s := sha512.Sum512(b)
	return "sha512-" + base64.StdEncoding.EncodeToString(s[:])
}

// TestDownloadFailuresMidStream: a body cut short is the registry's
// outage (retried), not bad bytes; a body without Content-Length that
// runs past MaxTarballBytes is ErrTooLarge when it passes the cap; the
// caller giving up mid-body is its own context's error. Each failure
// sticks: Verify returns it too.
func TestDownloadFailuresMidStream(t *testing.T) {
	data := bytes.Repeat([]byte{1, 2, 3, 5, 8, 13}, 64<<10) // a download need not be a tarball
	tests := []struct {
		mode  fakeregistry.Mode
		cfg   Config
		check func(t *testing.T, err error)
	}{
		{fakeregistry.Cut, Config{}, isUnavailable(0, 30*time.Second, "closed before the answer was complete")},
		{fakeregistry.Chunked, Config{MaxTarballBytes: int64(len(data)) - 1}, func(t *testing.T, err error) { isA(t, err, ErrTooLarge) }},
		{fakeregistry.Stall, Config{}, func(t *testing.T, err error) { isA(t, err, context.Canceled) }},
	}
	for _, tc := range tests {
		t.Run(string(tc.mode), func(t *testing.T) {
			h := fakeregistry.NewTarballHost(t, data, tc.mode)
			e, v := hostEnv(t, data, h, tc.cfg)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			d, err := e.c.Tarball(ctx, "p", v)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if tc.mode == fakeregistry.Stall {
				go func() { <-h.Sent(); cancel() }()
			}
			got, err := io.ReadAll(d)
			if err == nil {
				t.Fatalf("read %d of %d bytes without an error", len(got), len(data))
			}
			tc.check(t, err)
			if verr := d.Verify(); verr != err {
				t.Errorf("Verify = %v, want the read's failure %v", verr, err)
			}
		})
	}
	t.Run("chunked within the cap", func(t *testing.T) {
		e, v := hostEnv(t, data, fakeregistry.NewTarballHost(t, data, fakeregistry.Chunked), Config{MaxTarballBytes: int64(len(data))})
		got, err := fetchAll(context.Background(), e.c, "p", v)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("fetchAll = %d bytes, %v; want the %d bytes", len(got), err, len(data))
		}
	})
}
