package reliability

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/lockfile"
)

// lockfileRSSTarget is issue 11's bound on a mirror parsing the costliest
// lockfile its limits accept: the process's peak RSS, from start.
const lockfileRSSTarget = 256 << 20

// worstLockfiles are, per format, the inputs that cost a parse the most
// memory at the default limits (lockfile.DefaultLimits): the YAML and JSONC
// formats with as many nodes as MaxNodes lets through, shaped as the
// parser's costliest entries, the JSON ones at MaxBytes. The first is
// issue 11's example (1.7 GiB before the node limit), refused now.
func worstLockfiles() []struct{ name, file, content string } {
	lim := lockfile.DefaultLimits()
	// upTo repeats line(i) while the content stays within both limits,
	// each line costing cost nodes of nodeBound's count (0: bytes only,
	// for the JSON formats, which have no node limit).
	upTo := func(head string, cost int, line func(i int) string, tail string) string {
		var b strings.Builder
		b.WriteString(head)
		for i, nodes := 0, 2+cost; nodes+cost < lim.MaxNodes-1000; i, nodes = i+1, nodes+cost {
			l := line(i)
			if int64(b.Len()+len(l)+len(tail)) > lim.MaxBytes {
				break
			}
			b.WriteString(l)
		}
		b.WriteString(tail)
		return b.String()
	}
	flow := "lockfileVersion: '9.0'\nx: [" + strings.Repeat("a,", int(lim.MaxBytes)/2-20) + "a]\n"
	return []struct{ name, file, content string }{
		{"pnpm flow sequence at max-bytes", "pnpm-lock.yaml", flow},
		{"pnpm packages at max-nodes", "pnpm-lock.yaml", upTo("lockfileVersion: '9.0'\npackages:\n", 6,
			func(i int) string { return "  p" + strconv.Itoa(i) + "@1.0.0: {}\n" }, "")},
		{"yarn berry flow sequence at max-nodes", "yarn.lock", upTo("__metadata: {version: 8}\nx: [", 2,
			func(int) string { return "a," }, "a]\n")},
		{"bun packages at max-nodes", "bun.lock", upTo(`{"lockfileVersion": 1, "packages": {`, 8,
			func(i int) string { return fmt.Sprintf(`"p%d": ["p%d@1.0.0"],`, i, i) }, "}}")},
		{"yarn v1 dependencies at max-nodes", "yarn.lock", yarnV1AtNodes(lim.MaxNodes)},
		{"package-lock packages at max-bytes", "package-lock.json", upTo(`{"lockfileVersion": 3, "packages": {"": {},`, 0,
			func(i int) string { return fmt.Sprintf(`"node_modules/p%d":{"version":"1.0.0"},`, i) }, `"node_modules/z":{"version":"1.0.0"}}}`)},
		{"package-lock root dependencies at max-bytes", "package-lock.json", upTo(`{"lockfileVersion": 3, "packages": {"": {"dependencies": {`, 0,
			func(i int) string { return fmt.Sprintf(`"p%d":"1",`, i) }, `"z":"1"}}}}`)},
	}
}

// yarnV1AtNodes is a yarn v1 entry whose dependencies hold as many keys
// and values as MaxNodes allows.
func yarnV1AtNodes(maxNodes int) string {
	var b strings.Builder
	b.WriteString("# yarn lockfile v1\n\na@1:\n  version 1.0.0\n  dependencies:\n")
	for i := 0; i < maxNodes/2-4; i++ {
		b.WriteString("    d" + strconv.Itoa(i) + " 1\n")
	}
	return b.String()
}

// TestLockfileParseMemory posts each worst lockfile to POST /v1/warm of a
// mirror process of its own and checks the process's peak RSS (VmHWM)
// stays within lockfileRSSTarget. Before the node limit a 16 MiB pnpm
// flow sequence took it to 1.7 GiB.
func TestLockfileParseMemory(t *testing.T) {
	reg := fakeregistry.New(t)
	for _, c := range worstLockfiles() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			body, err := json.Marshal(map[string]any{"lockfile": map[string]string{"name": c.file, "content": c.content}})
			if err != nil {
				t.Fatal(err)
			}
			mir := startMirror(t, processEnv(t, reg, "PKGSCOPE_DATA_DIR="+t.TempDir()))
			before := peakRSS(t, mir)
			hc := &http.Client{}
			defer hc.CloseIdleConnections()
			a := do(t.Context(), hc, http.MethodPost, mir.url+"/v1/warm", string(body), 5*time.Minute)
			if a.err != nil || a.status >= 500 {
				t.Errorf("POST: %v, want 202, 400 (too many packages to warm) or 413 (over a lockfile limit)", a)
			}
			peak := peakRSS(t, mir)
			t.Logf("%s: %.1f MiB body, %d, peak RSS %d MiB (%d MiB at start)", c.name, float64(len(body))/(1<<20), a.status, peak>>20, before>>20)
			if peak > lockfileRSSTarget {
				t.Errorf("peak RSS %d MiB, over the %d MiB target", peak>>20, lockfileRSSTarget>>20)
			}
		})
	}
}

// peakRSS reads the process's VmHWM.
func peakRSS(t *testing.T, p *proc) int64 { return rss(t, p, "VmHWM:") }
