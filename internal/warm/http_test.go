package warm

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/lockfile"
)

func TestHTTP(t *testing.T) {
	t.Parallel()
	reg := fakeregistry.New(t)
	_, locked := fixtures(t)
	for _, nv := range locked {
		w := ParseSpecArg(nv)
		publish(t, reg, w.Name, w.Spec)
	}
	w := newWorker(t, reg, newLocation(t, sqliteBackend).open(t), testConfig(), nil)
	w.start()
	e := echo.New()
	NewHandlers(w.q, lockfile.DefaultLimits(), NewParseSlots(2), nil).Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)

	post := func(body string) (int, []byte) {
		t.Helper()
		resp, err := http.Post(srv.URL+"/v1/warm", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	get := func(id string) (int, Progress) {
		t.Helper()
		resp, err := http.Get(srv.URL + "/v1/warm/" + id)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var p Progress
		if resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode, p
	}
	accepted := func(body string) string {
		t.Helper()
		status, b := post(body)
		var r PostResponse
		if status != http.StatusAccepted || json.Unmarshal(b, &r) != nil || r.Status != "/v1/warm/"+r.ID {
			t.Fatalf("POST %s: %d %s, want 202 with an id", body, status, b)
		}
		w.wait(r.ID)
		return r.ID
	}

	t.Run("specs", func(t *testing.T) {
		id := accepted(`{"specs":["ms@2.0.0","react@^18"," debug@4.4.3 "]}`)
		status, p := get(id)
		if status != http.StatusOK || !p.Finished || p.Done != 3 || p.Total != 3 {
			t.Errorf("GET: %d %+v, want 3 done", status, p)
		}
	})
	t.Run("lockfile", func(t *testing.T) {
		lock, err := os.ReadFile("../lockfile/testdata/package-lock-v3/package-lock.json")
		if err != nil {
			t.Fatal(err)
		}
		manifest, err := os.ReadFile("../lockfile/testdata/package-lock-v3/package.json")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(PostBody{Lockfile: &PostLockfile{Name: "package-lock.json", Content: string(lock), PackageJSON: string(manifest)}})
		id := accepted(string(body))
		_, p := get(id)
		if !p.Finished || p.Failed != 0 || p.Skipped == 0 || p.Done+p.Present == 0 || !strings.Contains(p.Source, "package-lock@3") {
			t.Errorf("GET: %+v, want warmed and skipped items, none failed", p)
		}
	})
	for name, body := range map[string]string{
		"both":                   `{"specs":["ms"],"lockfile":{"name":"package-lock.json","content":"{}"}}`,
		"neither":                `{}`,
		"empty specs":            `{"specs":[]}`,
		"unknown":                `{"specs":["ms"],"priority":1}`,
		"two values":             `{"specs":["ms"]} {}`,
		"not json":               `specs=ms`,
		"bad lockfile":           `{"lockfile":{"name":"yarn.lock","content":"\"a@^1\":\n  version 1\n    x"}}`,
		"no content":             `{"lockfile":{"name":"package-lock.json"}}`,
		"a bad name":             `{"specs":["ms","Bad Name"]}`,
		"a NUL":                  `{"specs":["ms","a\u0000b@1.0.0"]}`,
		"a NUL in a lockfile":    `{"lockfile":{"name":"package-lock.json","content":"{\"lockfileVersion\":3,\"packages\":{\"node_modules/a\\u0000b\":{\"version\":\"1.0.0\"}}}"}}`,
		"unknown lockfile field": `{"lockfile":{"name":"package-lock.json","content":"{}","size":1}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if status, b := post(body); status != http.StatusBadRequest {
				t.Errorf("POST %s: %d %s, want 400", body, status, b)
			}
		})
	}
	// encoding/json alone would take these: a field's name in another
	// case gets the name spelt right.
	for body, want := range map[string]string{
		`{"Specs":["ms"]}`: `unknown field \"Specs\": did you mean \"specs\"?`,
		`{"lockfile":{"name":"package-lock.json","content":"{}","packageJSON":"{}"}}`: `unknown field \"lockfile.packageJSON\": did you mean \"packageJson\"?`,
	} {
		if status, b := post(body); status != http.StatusBadRequest || !strings.Contains(string(b), want) {
			t.Errorf("POST %s: %d %s, want 400 with %s", body, status, b, want)
		}
	}
	t.Run("too many", func(t *testing.T) {
		specs := strings.Repeat(`"ms",`, testConfig().MaxRequestItems) + `"ms"`
		if status, b := post(`{"specs":[` + specs + `]}`); status != http.StatusBadRequest {
			t.Errorf("POST over max-request-items: %d %s, want 400", status, b)
		}
	})
	t.Run("unknown id", func(t *testing.T) {
		if status, _ := get("0123456789abcdef0123456789abcdef"); status != http.StatusNotFound {
			t.Errorf("GET unknown id: %d, want 404", status)
		}
	})
}
