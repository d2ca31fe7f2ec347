// Package fakemdn is an MDN stand-in for tests: it serves the two JSON
// endpoints explore_web_docs reads, in the shapes MDN documents and its
// own site's client code reads them:
//
//   - GET {page path}/index.json → {"doc": {"title", "mdn_url", "summary",
//     "locale", "pageType", "browserCompat", "body": [sections]}}, where a
//     section is {"type": "prose", "value": {"id", "title", "isH3",
//     "content" (HTML)}}, {"type": "browser_compatibility", "value":
//     {"id", "title", "isH3", "query"}} or {"type": "specifications",
//     "value": {"id", "title", "isH3", "query", "specifications":
//     [{"bcdSpecificationURL", "title"}]}}; an unknown page is a 404;
//   - GET /api/v1/search?q=&locale=&size= → {"documents": [{"mdn_url",
//     "locale", "title", "slug", "summary", "score", "popularity",
//     "highlight": {"body", "title"}}], "metadata": {"took_ms",
//     "api_took_ms", "size", "page", "total": {"value", "relation"}},
//     "suggestions": []}.
//
// SetDown makes it answer 503 to everything, as an unreachable MDN would
// fail.
package fakemdn

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Section is one element of a page's body.
type Section struct {
	// Type is "prose", "browser_compatibility" or "specifications".
	Type  string
	Title string
	IsH3  bool
	// Content is the HTML of a prose section.
	Content string
	// Query is the BCD key of a compat or specifications section.
	Query string
	// Specs are the specifications section's links.
	Specs []Spec
}

// Spec is one specification link.
type Spec struct{ URL, Title string }

// Page is one MDN page.
type Page struct {
	Title, Summary, PageType string
	BrowserCompat            []string
	Body                     []Section
}

// Server is a running fake MDN.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex
	pages    map[string]Page // lower-cased path → page
	paths    map[string]string
	down     bool
	requests map[string]int
}

// New starts a fake MDN, closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{pages: map[string]Page{}, paths: map[string]string{}, requests: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL to configure as MDN's.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server: requests then fail to connect.
func (s *Server) Close() { s.srv.Close() }

// AddPage serves p at path ("/en-US/docs/Web/API/ResizeObserver").
func (s *Server) AddPage(path string, p Page) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[strings.ToLower(path)] = p
	s.paths[strings.ToLower(path)] = path
}

// SetDown makes every request answer 503 (true) or be served (false).
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Requests returns how many requests reached path (an index.json path
// without the suffix, or "/api/v1/search").
func (s *Server) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[strings.ToLower(path)]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := r.URL.Path
	page, isDoc := strings.CutSuffix(path, "/index.json")
	if isDoc {
		s.requests[strings.ToLower(page)]++
	} else {
		s.requests[strings.ToLower(path)]++
	}
	if s.down {
		http.Error(w, "upstream connect error", http.StatusServiceUnavailable)
		return
	}
	switch {
	case r.Method != http.MethodGet:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	case path == "/api/v1/search":
		s.search(w, r)
	case isDoc:
		p, ok := s.pages[strings.ToLower(page)]
		if !ok {
			http.Error(w, "<html>Page not found</html>", http.StatusNotFound)
			return
		}
		writeJSON(w, map[string]any{"doc": s.doc(s.paths[strings.ToLower(page)], p), "url": s.paths[strings.ToLower(page)]})
	default:
		http.Error(w, "<html>Page not found</html>", http.StatusNotFound)
	}
}

func (s *Server) doc(path string, p Page) map[string]any {
	body := []map[string]any{}
	for i, sec := range p.Body {
		id := strings.ToLower(strings.ReplaceAll(sec.Title, " ", "_"))
		v := map[string]any{"id": nilIfEmpty(id), "title": nilIfEmpty(sec.Title), "isH3": sec.IsH3}
		switch sec.Type {
		case "browser_compatibility":
			v["query"] = sec.Query
			v["dataURL"] = "/" + strconv.Itoa(i) + "/bcd.json"
		case "specifications":
			v["query"] = sec.Query
			specs := []map[string]string{}
			for _, sp := range sec.Specs {
				specs = append(specs, map[string]string{"bcdSpecificationURL": sp.URL, "title": sp.Title})
			}
			v["specifications"] = specs
		default:
			v["content"] = sec.Content
		}
		body = append(body, map[string]any{"type": sec.Type, "value": v})
	}
	return map[string]any{
		"title": p.Title, "mdn_url": path, "summary": p.Summary, "locale": "en-US", "native": "English (US)",
		"pageType": p.PageType, "browserCompat": nonNil(p.BrowserCompat), "body": body, "toc": []any{},
		"isMarkdown": true, "isTranslated": false, "isActive": true, "flaws": map[string]any{},
	}
}

// search matches pages whose title holds every word of q.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := strings.ToLower(r.URL.Query().Get("q"))
	size, _ := strconv.Atoi(r.URL.Query().Get("size"))
	if size <= 0 {
		size = 10
	}
	docs := []map[string]any{}
	for lp, p := range s.pages {
		match := q != ""
		for _, word := range strings.Fields(q) {
			if !strings.Contains(strings.ToLower(p.Title), word) {
				match = false
			}
		}
		if !match || len(docs) == size {
			continue
		}
		path := s.paths[lp]
		docs = append(docs, map[string]any{
			"mdn_url": path, "locale": "en-us", "title": p.Title, "slug": strings.SplitN(path, "/docs/", 2)[1],
			"summary": p.Summary, "score": 10.5, "popularity": 0.1,
			"highlight": map[string]any{"body": []string{}, "title": []string{}},
		})
	}
	writeJSON(w, map[string]any{
		"documents": docs,
		"metadata": map[string]any{
			"took_ms": 1, "api_took_ms": 2, "size": size, "page": 1,
			"total": map[string]any{"value": len(docs), "relation": "eq"},
		},
		"suggestions": []any{},
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}
