package popular

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pkgscope/pkgscope/internal/npmspec"
)

// SearchOptions bound a refresh from the registry's search endpoint.
type SearchOptions struct {
	// Texts are the search queries. The endpoint ranks only packages that
	// match a text, so a refresh runs several broad ones and keeps each
	// package's best popularity. Default DefaultTexts.
	Texts []string
	// Size is how many packages the list keeps. Default 5000.
	Size int
	// PageSize is the endpoint's size parameter; 250 is the most it
	// returns per page.
	PageSize int
	// MaxPages caps the pages read per text. Default 20 (5000 results).
	MaxPages int
	// MaxResponseBytes caps one page's body. Default 16 MiB; a page of
	// 250 results measured about 300 KB.
	MaxResponseBytes int64
	// Timeout bounds one page request. Default 30 s.
	Timeout time.Duration
	// Now dates the list; tests fix it.
	Now func() time.Time
}

// DefaultTexts are broad queries that together cover the packages most
// projects install: the ecosystem's most common keywords.
var DefaultTexts = []string{
	"keywords:javascript", "keywords:typescript", "keywords:react", "keywords:node",
	"keywords:cli", "keywords:util", "keywords:types", "keywords:css", "keywords:test",
	"keywords:build", "keywords:eslint", "keywords:babel", "keywords:webpack", "keywords:vue",
}

func (o SearchOptions) withDefaults() SearchOptions {
	if len(o.Texts) == 0 {
		o.Texts = DefaultTexts
	}
	if o.Size <= 0 {
		o.Size = 5000
	}
	if o.PageSize <= 0 || o.PageSize > 250 {
		o.PageSize = 250
	}
	if o.MaxPages <= 0 {
		o.MaxPages = 20
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = 16 << 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Registry is where Search asks: the registry's base URL (with a trailing
// slash, from npm's configuration) and the Authorization header npm would
// send to a URL ("" for none).
type Registry struct {
	// URL is the registry's base URL, ending in a slash.
	URL string
	// Auth returns the Authorization header for a URL, "" for none.
	Auth func(url string) string
}

// searchPage is the part of the search endpoint's answer Search reads.
type searchPage struct {
	Objects []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
		Score struct {
			Detail struct {
				Popularity float64 `json:"popularity"`
			} `json:"detail"`
		} `json:"score"`
	} `json:"objects"`
	Total int `json:"total"`
}

// Search builds a list from the registry's search endpoint,
// GET {registry}-/v1/search?text=T&popularity=1.0&quality=0.0&maintenance=0.0&size=250&from=N,
// paging through each of opts.Texts and ranking packages by their best
// popularity score. hc may be nil for a default client.
func Search(ctx context.Context, hc *http.Client, reg Registry, opts SearchOptions) (*List, error) {
	opts = opts.withDefaults()
	if hc == nil {
		hc = &http.Client{}
	}
	best := map[string]float64{}
	for _, text := range opts.Texts {
		for page := 0; page < opts.MaxPages; page++ {
			p, err := fetchPage(ctx, hc, reg, opts, searchQuery(text, opts.PageSize, page*opts.PageSize))
			if err != nil {
				return nil, err
			}
			for _, o := range p.Objects {
				name := o.Package.Name
				if npmspec.ValidateName(name) != nil {
					continue // a registry answer is not trusted to be well formed
				}
				if s, ok := best[name]; !ok || o.Score.Detail.Popularity > s {
					best[name] = o.Score.Detail.Popularity
				}
			}
			if len(p.Objects) < opts.PageSize || (page+1)*opts.PageSize >= p.Total {
				break
			}
		}
	}
	if len(best) == 0 {
		return nil, errors.New("popular: the search endpoint returned no packages")
	}
	l := &List{
		Source: "/-/v1/search?" + searchQuery("{"+strings.Join(opts.Texts, "|")+"}", opts.PageSize, 0),
		Method: fmt.Sprintf("registry search ranked by popularity alone, %d texts, up to %d pages of %d each; each package keeps its best score", len(opts.Texts), opts.MaxPages, opts.PageSize),
		Date:   opts.Now().UTC().Format(time.DateOnly),
		Score:  "the search endpoint's score.detail.popularity (0 to 1)",
	}
	return l.ranked(best, opts.Size), nil
}

func searchQuery(text string, size, from int) string {
	q := url.Values{}
	q.Set("text", text)
	q.Set("popularity", "1.0")
	q.Set("quality", "0.0")
	q.Set("maintenance", "0.0")
	q.Set("size", strconv.Itoa(size))
	q.Set("from", strconv.Itoa(from))
	return q.Encode()
}

func fetchPage(ctx context.Context, hc *http.Client, reg Registry, opts SearchOptions, query string) (*searchPage, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	u := reg.URL + "-/v1/search?" + query
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("popular: search: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if reg.Auth != nil {
		if h := reg.Auth(u); h != "" {
			req.Header.Set("Authorization", h)
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("popular: search: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("popular: search %s: the registry answered %s (does it serve /-/v1/search?)", query, resp.Status)
	}
	var p searchPage
	body := io.LimitReader(resp.Body, opts.MaxResponseBytes+1)
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("popular: search: %w", err)
	}
	if int64(len(b)) > opts.MaxResponseBytes {
		return nil, fmt.Errorf("popular: search page over %d bytes", opts.MaxResponseBytes)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("popular: search page: %w", err)
	}
	return &p, nil
}

// FromDownloads builds a list from a tab-separated package index whose
// first line names its columns and which has a "name" column and a
// "downloads_a_month" column, ranking by the latter. source names the
// file (no host) and date when it was made.
func FromDownloads(r io.Reader, source, date string, size int) (*List, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() {
		return nil, fmt.Errorf("popular: %s is empty", source)
	}
	cols := strings.Split(sc.Text(), "\t")
	nameCol, dlCol := slices.Index(cols, "name"), slices.Index(cols, "downloads_a_month")
	if nameCol < 0 || dlCol < 0 {
		return nil, fmt.Errorf("popular: %s: the first line must name the columns name and downloads_a_month", source)
	}
	scores := map[string]float64{}
	for line := 2; sc.Scan(); line++ {
		f := strings.Split(sc.Text(), "\t")
		if len(f) <= max(nameCol, dlCol) {
			continue
		}
		n, err := strconv.ParseInt(f[dlCol], 10, 64)
		if err != nil || npmspec.ValidateName(f[nameCol]) != nil {
			continue
		}
		scores[f[nameCol]] = max(scores[f[nameCol]], float64(n))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("popular: reading %s: %w", source, err)
	}
	l := &List{
		Source: source,
		Method: "ranked by monthly downloads from a package index file (name, version, downloads_a_month)",
		Date:   date,
		Score:  "downloads in a month",
	}
	return l.ranked(scores, size), nil
}

// ranked fills l.Packages with the size best of scores, ties by name.
func (l *List) ranked(scores map[string]float64, size int) *List {
	l.Packages = make([]Package, 0, len(scores))
	for name, s := range scores {
		l.Packages = append(l.Packages, Package{Name: name, Score: s})
	}
	slices.SortFunc(l.Packages, func(a, b Package) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	if len(l.Packages) > size {
		l.Packages = l.Packages[:size]
	}
	return l
}
