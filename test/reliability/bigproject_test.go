package reliability

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	tb "github.com/pkgscope/pkgscope/internal/tarballtest"
)

// projectPackagesEnv sets the packages of TestLargeProject: the default
// run uses defaultProjectPackages so the suite stays quick; issue 25 §7's
// figure is 20,000, max-project-packages' default:
//
//	PKGSCOPE_RELIABILITY_PROJECT_PACKAGES=20000 go test -count=1 -run TestLargeProject -v -timeout 2h ./test/reliability/
const projectPackagesEnv = "PKGSCOPE_RELIABILITY_PROJECT_PACKAGES"

const defaultProjectPackages = 300

// largeProjectRSS bounds the mirror's peak RSS through registering,
// warming and grepping a project of up to 20,000 packages.
const largeProjectRSS = 1 << 30

// projectLockfile is a package-lock.json (v3) installing n packages
// pkg00000… at 1.0.0, each published to reg with one file holding a
// marker of its own.
func projectLockfile(t testing.TB, reg *fakeregistry.Registry, n int) string {
	t.Helper()
	deps := map[string]string{}
	pkgs := map[string]any{}
	for i := range n {
		name := fmt.Sprintf("pkg%05d", i)
		reg.Publish(name, "1.0.0", tb.Package(t, map[string]string{
			"package.json": `{"name":"` + name + `","version":"1.0.0"}`,
			"index.js":     fmt.Sprintf("export const marker = 'needle_%05d';\n", i),
		}))
		deps[name] = "1.0.0"
		pkgs["node_modules/"+name] = map[string]string{"version": "1.0.0"}
	}
	pkgs[""] = map[string]any{"name": "big", "dependencies": deps}
	b, err := json.Marshal(map[string]any{"name": "big", "lockfileVersion": 3, "requires": true, "packages": pkgs})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLargeProject is issue 25 §7: a project of many packages (300 by
// default, 20,000 with PKGSCOPE_RELIABILITY_PROJECT_PACKAGES) is
// registered, warmed and grepped on the mirror binary with its defaults:
// every package is warmed, a grep finds the one package holding a
// marker, and the process's peak RSS stays under largeProjectRSS. The
// times are reported, not asserted.
func TestLargeProject(t *testing.T) {
	n := defaultProjectPackages
	if v := os.Getenv(projectPackagesEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number of packages", projectPackagesEnv, v)
		}
	}
	reg := fakeregistry.New(t)
	lock := projectLockfile(t, reg, n)
	mir := startMirror(t, processEnv(t, reg))
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	bound := 10*time.Minute + time.Duration(n)*100*time.Millisecond // a bound on hanging only

	warmed := mir.waitForN(regexp.MustCompile(`msg="warm job done"`), n)
	body, _ := json.Marshal(map[string]any{"lockfile": map[string]string{"name": "package-lock.json", "content": lock}})
	start := time.Now()
	a := do(t.Context(), hc, http.MethodPost, mir.url+"/v1/projects", string(body), bound)
	registered := time.Since(start)
	var reg1 struct{ ID string }
	if a.status/100 != 2 || json.Unmarshal(a.body, &reg1) != nil || reg1.ID == "" {
		t.Fatalf("registering %d packages: %v", n, a)
	}
	select {
	case <-warmed:
	case err := <-mir.exited:
		mir.exited <- err
		t.Fatalf("the mirror exited: %v", err)
	case <-time.After(bound):
		st := do(t.Context(), hc, http.MethodGet, mir.url+"/v1/projects/"+reg1.ID, "", time.Minute)
		t.Fatalf("%d packages not warmed within %s: %.300s", n, bound, st.body)
	}
	warmTook := time.Since(start)
	st := do(t.Context(), hc, http.MethodGet, mir.url+"/v1/projects/"+reg1.ID, "", time.Minute)
	var status struct {
		Total, Warm int
		Ready       bool
	}
	if json.Unmarshal(st.body, &status) != nil || !status.Ready || status.Warm != n {
		t.Fatalf("after %d warm jobs: %.300s", n, st.body)
	}

	last := fmt.Sprintf("needle_%05d", n-1)
	grep := fmt.Sprintf(`{"project":%q,"action":"grep","pattern":%q}`, reg1.ID, last)
	var greps [2]time.Duration
	for i := range greps { // cold: the indexes open; warm: they are open
		start = time.Now()
		a = do(t.Context(), hc, http.MethodPost, mir.url+"/v1/explore", grep, bound)
		greps[i] = time.Since(start)
		if a.status != http.StatusOK || !strings.Contains(string(a.body), fmt.Sprintf("pkg%05d", n-1)) {
			t.Fatalf("project grep %s: %v", last, a)
		}
	}
	peak := rss(t, mir, "VmHWM:")
	t.Logf("%d packages: registered in %s, warm after %s, grep %s cold, %s warm; peak RSS %d MiB",
		n, registered.Round(time.Millisecond), warmTook.Round(time.Second), greps[0].Round(time.Millisecond), greps[1].Round(time.Millisecond), peak>>20)
	if peak > largeProjectRSS {
		t.Errorf("peak RSS %d MiB over %d MiB", peak>>20, largeProjectRSS>>20)
	}
}
