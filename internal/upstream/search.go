package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// maxSearchBytes caps a search answer: 20 results of npm's search are
// about 30 KB (each carries a description, links and scores).
const maxSearchBytes = 1 << 20

// Search returns the names of up to size packages the registry's search
// (/-/v1/search, as `npm search` asks) finds for text, best first. It is
// what a correction asks when a name is not found, so it does not go
// through the circuit breaker's accounting of packument failures: a
// registry without search (some private ones) just has no suggestions.
func (c *Client) Search(ctx context.Context, text string, size int) ([]string, error) {
	what := "search " + text
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	registry := c.npm.RegistryFor(text)
	u := registry + "-/v1/search?text=" + url.QueryEscape(text) + "&size=" + strconv.Itoa(size)
	req, err := http.NewRequestWithContext(withOrigin(ctx, registry), http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	if auth := c.npm.AuthHeader(u); auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.send(ctx, req, what)
	if err != nil {
		return nil, err
	}
	defer drainClose(resp.Body)
	var body struct {
		Objects []struct {
			Package struct {
				Name string `json:"name"`
			} `json:"package"`
		} `json:"objects"`
	}
	if err := json.NewDecoder(&limitedReader{r: resp.Body, n: maxSearchBytes}).Decode(&body); err != nil {
		return nil, fmt.Errorf("%s: decoding: %w", what, err)
	}
	var names []string
	for _, o := range body.Objects {
		// A name that cannot be a package's ("evil\r\nforged", markup)
		// is dropped as packuments' bad versions are: the names are
		// quoted in answers' corrections.
		if _, err := escapeName(o.Package.Name); err == nil {
			names = append(names, o.Package.Name)
		} else {
			c.dropped.names.Add(1)
		}
	}
	return names, nil
}
