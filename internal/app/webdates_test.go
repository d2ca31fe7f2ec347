package app

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pkgscope/pkgscope/internal/config"
	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
)

// datedMirror holds dated@1.0.0, 1.1.0 and 2.0.0-beta.1 on its registry,
// each published on its own day, with 1.1.0 stored.
func datedMirror(t *testing.T, kind storeKind, tweak ...func(*config.Config)) *mirror {
	m := newMirror(t, kind, tweak...)
	for v, day := range map[string]time.Time{
		"1.0.0":        time.Date(2023, 5, 6, 7, 8, 9, 0, time.UTC),
		"1.1.0":        time.Date(2024, 7, 8, 9, 10, 11, 0, time.UTC),
		"2.0.0-beta.1": time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
	} {
		m.reg.Publish("dated", v, tarballtest.Package(t, map[string]string{
			"package.json": `{"name":"dated","version":"` + v + `"}`, "README.md": "# dated\n",
		}), fakeregistry.PublishedAt(day))
	}
	m.reg.SetDistTag("dated", "latest", "1.1.0")
	m.fetch("dated@1.1.0")
	return m
}

// TestWebPackagePageDates: the package page gives this version's publish
// date in its facts and each version's in the list, as <time datetime>,
// read from the full packument once per packument-ttl; the page of a
// version not stored (the Fetch button) asks the registry for nothing.
func TestWebPackagePageDates(t *testing.T) {
	forEachStore(t, func(t *testing.T, kind storeKind) {
		m := datedMirror(t, kind)
		resp, page := getHTML(t, m, "/browse/dated@1.1.0")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("package page: %d", resp.StatusCode)
		}
		for _, want := range []string{
			`<dt>Published</dt><dd><time class="meta" datetime="2024-07-08T09:10:11Z">2024-07-08</time></dd>`,
			`>1.0.0</a> <time class="meta" datetime="2023-05-06T07:08:09Z">2023-05-06</time>`,
			`>latest: 1.1.0</a> <time class="meta" datetime="2024-07-08T09:10:11Z">2024-07-08</time>`,
			`>2.0.0-beta.1</a> <time class="meta" datetime="2025-01-02T03:04:05Z">2025-01-02</time>`,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the package page lacks %s", want)
			}
		}
		if strings.Contains(page, `role="note">Publish dates`) {
			t.Error("the page notes missing dates while showing them")
		}
		n := m.reg.PackumentRequests("dated")
		getHTML(t, m, "/browse/dated@1.1.0")
		if _, fetchPage := getHTML(t, m, "/browse/dated@1.0.0"); !strings.Contains(fetchPage, "Fetch") {
			t.Errorf("an unstored version's page offers no Fetch button:\n%.500s", fetchPage)
		}
		if after := m.reg.PackumentRequests("dated"); after != n {
			t.Errorf("a second view and an unstored version's page made %d more registry requests, want 0", after-n)
		}
	})
}

// TestWebPackagePageDatesOverCap: past packument-times-max-bytes the page
// has no dates and says why.
func TestWebPackagePageDatesOverCap(t *testing.T) {
	m := datedMirror(t, embedded, func(c *config.Config) { c.PackumentTimesMaxBytes = 64 })
	resp, page := getHTML(t, m, "/browse/dated@1.1.0")
	if resp.StatusCode != http.StatusOK || strings.Contains(page, "<time") || !strings.Contains(page, "Publish dates are left out") {
		t.Errorf("over the cap: %d, want the page without dates and a note:\n%s", resp.StatusCode, page)
	}
	if !strings.Contains(page, `aria-current="page" class="current">1.1.0</a>`) {
		t.Error("over the cap the version list is gone too")
	}
}

// TestWebPackagePageDatesRegistryDown: a registry failing the full
// packument leaves the page whole, without dates, with a note.
func TestWebPackagePageDatesRegistryDown(t *testing.T) {
	m := datedMirror(t, embedded)
	m.reg.Fail("dated", http.StatusBadGateway, "")
	resp, page := getHTML(t, m, "/browse/dated@1.1.0")
	if resp.StatusCode != http.StatusOK || strings.Contains(page, "<time") || !strings.Contains(page, "Publish dates are unavailable") ||
		!strings.Contains(page, "<h2>dated</h2>") {
		t.Errorf("registry down: %d, want the page with its README, no dates and a note:\n%s", resp.StatusCode, page)
	}
}

// TestWebPackagePageDatesDoNotHoldThePage: a registry that does not
// answer for the dates holds the page only packument-times-timeout; it
// renders without them and says they are on their way.
func TestWebPackagePageDatesDoNotHoldThePage(t *testing.T) {
	m := datedMirror(t, embedded, func(c *config.Config) { c.PackumentTimesTimeout = 50 * time.Millisecond })
	release := m.reg.Hold("dated")
	defer release()
	resp, page := getHTML(t, m, "/browse/dated@1.1.0")
	if resp.StatusCode != http.StatusOK || strings.Contains(page, "<time") || !strings.Contains(page, "Publish dates are still on their way") {
		t.Errorf("a held registry: %d, want the page without dates and a note:\n%s", resp.StatusCode, page)
	}
}
