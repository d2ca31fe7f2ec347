package webdocs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/pkgscope/pkgscope/internal/breaker"
	"github.com/pkgscope/pkgscope/internal/lru"
	"github.com/pkgscope/pkgscope/internal/upstream"
)

// MDNOptions configure fetching MDN's prose from its public JSON: a page's
// {path}/index.json ({"doc": {title, summary, body: [sections]}}) and
// /api/v1/search?q=...&locale=en-US ({"documents": [{mdn_url, title,
// summary}], "metadata": {...}}).
type MDNOptions struct {
	// BaseURL is MDN's site, scheme and host; empty turns fetching off.
	BaseURL string
	// Timeout bounds fetching one page; SearchTimeout how long a search
	// waits for MDN's summaries before answering without them (the
	// ranking is ours, so they are a nicety).
	Timeout, SearchTimeout time.Duration
	// Cooldown is how long MDN is not asked after a failure, so an
	// air-gapped mirror pays one timeout per Cooldown, not one per call.
	Cooldown time.Duration
	// CacheBytes bounds the pages and summaries kept in memory; CacheTTL
	// is how long one is reused (MDN edits pages daily, but an agent's
	// session does not need the latest commas).
	CacheBytes int64
	CacheTTL   time.Duration
	// MaxBodyBytes caps one response. MDN's largest reference pages'
	// index.json are about 1 MB.
	MaxBodyBytes int64
	// UserAgent is sent with every request.
	UserAgent string
}

// DefaultMDNOptions returns the defaults explained on MDNOptions, with
// MDN's public site as BaseURL.
func DefaultMDNOptions() MDNOptions {
	return MDNOptions{
		BaseURL: "https://developer.mozilla.org", Timeout: 10 * time.Second, SearchTimeout: 3 * time.Second,
		Cooldown: 30 * time.Second, CacheBytes: 64 << 20, CacheTTL: 24 * time.Hour, MaxBodyBytes: 8 << 20,
		UserAgent: "pkgscope (explore_web_docs)",
	}
}

// mdnDoc is one page as MDN serves it, rendered to markdown.
type mdnDoc struct {
	title, summary, markdown string
}

type mdnClient struct {
	base  string // no trailing slash
	host  string
	http  *http.Client
	opt   MDNOptions
	log   *slog.Logger
	cache *lru.Cache[string, any] // a nil value is a cached "not found"
	group singleflight.Group
	// down is open for Cooldown after a failure; then any number of
	// requests go through again (a doc's fetches are single-flighted
	// already).
	down *breaker.Breaker
}

func newMDNClient(opt MDNOptions, hc *http.Client, log *slog.Logger) *mdnClient {
	def := DefaultMDNOptions()
	opt.Timeout = cmp.Or(opt.Timeout, def.Timeout)
	opt.SearchTimeout = cmp.Or(opt.SearchTimeout, def.SearchTimeout)
	opt.Cooldown = cmp.Or(opt.Cooldown, def.Cooldown)
	opt.CacheBytes = cmp.Or(opt.CacheBytes, def.CacheBytes)
	opt.CacheTTL = cmp.Or(opt.CacheTTL, def.CacheTTL)
	opt.MaxBodyBytes = cmp.Or(opt.MaxBodyBytes, def.MaxBodyBytes)
	opt.UserAgent = cmp.Or(opt.UserAgent, def.UserAgent)
	base := strings.TrimRight(opt.BaseURL, "/")
	host := ""
	if u, err := url.Parse(base); err == nil {
		host = u.Host
	}
	c := &http.Client{}
	if hc != nil {
		cp := *hc
		c = &cp
	}
	// MDN's redirects stay on MDN; anything else is not followed.
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Host != host || len(via) >= 5 {
			return http.ErrUseLastResponse
		}
		return nil
	}
	return &mdnClient{base: base, host: host, http: c, opt: opt, log: log, cache: lru.New[string, any](opt.CacheBytes, lru.Options{MaxEntryCost: opt.CacheBytes / 4}),
		down: breaker.New(breaker.Options{Failures: 1, Cooldown: opt.Cooldown, Probes: -1})}
}

// errNotOnMDN is a page MDN answers 404 for.
var errNotOnMDN = errors.New("MDN has no such page (404)")

// open reports whether MDN may be asked now, or why not.
func (c *mdnClient) open() (bool, string) {
	if _, err := c.down.Allow(); err != nil {
		var oe *breaker.OpenError
		if errors.As(err, &oe) {
			return false, downWhy(oe.Last, oe.Until)
		}
		return false, err.Error()
	}
	return true, ""
}

// trip records a failure: MDN is not asked again for Cooldown. The
// failure is logged here, once per trip.
func (c *mdnClient) trip(err error) string {
	ch := c.down.Record(false, breaker.Failure, err)
	// The note a caller reads says what failed in words (err names no
	// URL or address: see getJSON); the log has the base URL and the
	// transport's own text.
	c.log.Warn("mdn unavailable", "base", c.base, "err", err, "detail", upstream.Detail(err), "cooldown", c.opt.Cooldown)
	return downWhy(err, ch.Until)
}

// downWhy is the note a caller reads while MDN is left alone: how long,
// not until when — a timestamp in an answer is bytes a model cannot use.
func downWhy(err error, until time.Time) string {
	secs := max(1, int(math.Ceil(time.Until(until).Seconds())))
	return fmt.Sprintf("MDN unreachable: %v; not asked again for %ds", err, secs)
}

// doc returns MDN's page at path (an "/en-US/docs/..." path), from the
// cache or MDN. Errors say why the prose is unavailable, in words.
func (c *mdnClient) doc(ctx context.Context, path string) (*mdnDoc, error) {
	key := "d:" + strings.ToLower(path)
	if v, ok := c.cache.Get(key); ok {
		if v == nil {
			return nil, errNotOnMDN
		}
		return v.(*mdnDoc), nil
	}
	if ok, why := c.open(); !ok {
		return nil, errors.New(why)
	}
	ch := c.group.DoChan(key, func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opt.Timeout)
		defer cancel()
		var raw struct {
			Doc struct {
				Title   string       `json:"title"`
				Summary string       `json:"summary"`
				Body    []mdnSection `json:"body"`
			} `json:"doc"`
		}
		status, err := c.getJSON(fctx, c.base+escapePath(path)+"/index.json", &raw)
		switch {
		case status == http.StatusNotFound:
			c.down.Record(false, breaker.Success, nil)
			c.put(key, nil, len(key))
			return nil, errNotOnMDN
		case err != nil:
			return nil, errors.New(c.trip(err))
		}
		c.down.Record(false, breaker.Success, nil)
		d := &mdnDoc{title: raw.Doc.Title, summary: raw.Doc.Summary, markdown: renderSections(raw.Doc.Title, raw.Doc.Body)}
		c.put(key, d, len(key)+len(d.markdown)+len(d.summary)+len(d.title))
		if d.summary != "" {
			c.put("s:"+strings.ToLower(path), d.summary, len(path)+len(d.summary))
		}
		return d, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*mdnDoc), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("gave up waiting for MDN: %w", ctx.Err())
	}
}

// summaries asks MDN's search for q and returns the summaries of the
// pages it finds, by lower-cased path; nil when MDN is off, down or slow.
func (c *mdnClient) summaries(ctx context.Context, q string, size int) map[string]string {
	size = min(max(size, 10), 100)
	key := "q:" + strconv.Itoa(size) + ":" + strings.ToLower(q)
	if v, ok := c.cache.Get(key); ok {
		m, _ := v.(map[string]string)
		return m
	}
	if ok, _ := c.open(); !ok {
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, c.opt.SearchTimeout)
	defer cancel()
	var raw struct {
		Documents []struct {
			MDNURL  string `json:"mdn_url"`
			Summary string `json:"summary"`
		} `json:"documents"`
	}
	u := c.base + "/api/v1/search?" + url.Values{"q": {q}, "locale": {"en-US"}, "size": {strconv.Itoa(size)}}.Encode()
	if _, err := c.getJSON(sctx, u, &raw); err != nil {
		if ctx.Err() == nil {
			c.trip(err)
		}
		return nil
	}
	c.down.Record(false, breaker.Success, nil)
	m := map[string]string{}
	n := len(key)
	for _, d := range raw.Documents {
		if d.MDNURL == "" || d.Summary == "" {
			continue
		}
		p := strings.ToLower(d.MDNURL)
		m[p] = d.Summary
		n += len(p) + len(d.Summary)
		c.put("s:"+p, d.Summary, len(p)+len(d.Summary))
	}
	c.put(key, m, n)
	return m
}

// cachedSummary is MDN's summary of path if one was seen.
func (c *mdnClient) cachedSummary(path string) string {
	if v, ok := c.cache.Get("s:" + strings.ToLower(path)); ok {
		s, _ := v.(string)
		return s
	}
	return ""
}

// getJSON GETs u and decodes a 200 answer into out. It returns the status
// and an error for anything but 200, which says what failed in words and
// names neither u nor any address (upstream.InWords): it becomes a note
// callers read.
func (c *mdnClient) getJSON(ctx context.Context, u string, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.opt.UserAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, upstream.InWords(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return resp.StatusCode, fmt.Errorf("MDN answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.opt.MaxBodyBytes+1))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("reading MDN's answer: %w", upstream.InWords(err))
	}
	if int64(len(body)) > c.opt.MaxBodyBytes {
		return resp.StatusCode, fmt.Errorf("MDN's answer is over %d bytes (setting mdn-max-body-bytes)", c.opt.MaxBodyBytes)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return resp.StatusCode, fmt.Errorf("MDN's answer is not the JSON expected: %w", err)
	}
	return resp.StatusCode, nil
}

// escapePath escapes each segment of an MDN path (slugs hold ":", "@",
// "(" and other characters).
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// mdnSection is one element of doc.body: "prose" (HTML content under an
// optional heading), "browser_compatibility" (a BCD query),
// "specifications" (spec links), or kinds added later, read as prose.
type mdnSection struct {
	Type  string `json:"type"`
	Value struct {
		Title          string `json:"title"`
		IsH3           bool   `json:"isH3"`
		Content        string `json:"content"`
		Query          string `json:"query"`
		Specifications []struct {
			URL   string `json:"bcdSpecificationURL"`
			Title string `json:"title"`
		} `json:"specifications"`
	} `json:"value"`
}

// renderSections turns an MDN doc's body into one markdown document.
func renderSections(title string, body []mdnSection) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", title)
	for _, s := range body {
		v := s.Value
		if v.Title != "" {
			h := "##"
			if v.IsH3 {
				h = "###"
			}
			fmt.Fprintf(&b, "\n%s %s\n", h, v.Title)
		}
		switch s.Type {
		case "browser_compatibility":
			if v.Query != "" {
				fmt.Fprintf(&b, "\nSupport table: action get_compat with key `%s`.\n", v.Query)
			}
		case "specifications":
			b.WriteString("\n")
			for _, sp := range v.Specifications {
				if sp.URL == "" {
					continue
				}
				if sp.Title != "" {
					fmt.Fprintf(&b, "- [%s](%s)\n", sp.Title, sp.URL)
				} else {
					fmt.Fprintf(&b, "- %s\n", sp.URL)
				}
			}
		default:
			if v.Content != "" {
				b.WriteString("\n" + htmlToMarkdown(v.Content) + "\n")
			}
		}
	}
	return strings.TrimSpace(b.String()) + "\n"
}

// put caches val for CacheTTL at size bytes plus 64 of bookkeeping; an
// entry over a quarter of the budget is not kept (lru.Options.MaxEntryCost),
// so one huge page cannot flush everything else.
func (c *mdnClient) put(key string, val any, size int) {
	c.cache.AddExpiring(key, val, int64(size)+64, time.Now().Add(c.opt.CacheTTL))
}
