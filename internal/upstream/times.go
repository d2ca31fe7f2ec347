package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/pkgscope/pkgscope/internal/semver"
)

// PublishTimes are the publish dates of a package's versions, read from
// the "time" object of its full packument.
type PublishTimes struct {
	// Versions maps each version that is valid semver to when it was
	// published; "created", "modified" and anything unreadable are left
	// out.
	Versions map[string]time.Time
	// TooLarge is set when the full packument was over
	// Config.MaxPackumentTimesBytes before its "time" object ended: then
	// Versions holds nothing and the dates are not fetched again before
	// PackumentTTL.
	TooLarge bool
}

type cachedTimes struct {
	t       *PublishTimes
	fetched time.Time
}

// fullAccept asks for the full packument: only it carries "time" (the
// abbreviated one has "modified" alone).
const fullAccept = "application/json"

// Times returns the publish dates of name's versions, from memory when
// they were read less than PackumentTTL ago. It fetches the full packument
// (tens of MB for next or typescript: fetch it only where a person looks
// at dates, never on an agent's path), reading it as a stream and keeping
// only the "time" object, at most MaxPackumentTimesBytes of it: past that
// it answers TooLarge, which is cached like a result.
//
// Errors are Packument's (ErrInvalidName, ErrNotFound, the caller's
// ctx.Err(), an *unavailable.Error) and are not cached. Concurrent calls
// for one name share one request, detached from the callers and bounded
// by RequestTimeout: a caller that stops waiting leaves the dates to be
// cached for the next one.
func (c *Client) Times(ctx context.Context, name string) (*PublishTimes, error) {
	escaped, err := escapeName(name)
	if err != nil {
		return nil, err
	}
	if t := c.freshTimes(name); t != nil {
		return t, nil
	}
	detached := context.WithoutCancel(ctx)
	ch := c.timesGroup.DoChan(name, func() (any, error) {
		if t := c.freshTimes(name); t != nil {
			return t, nil
		}
		t, err := c.fetchTimes(detached, name, escaped)
		if err != nil {
			return nil, err
		}
		c.times.Add(name, cachedTimes{t: t, fetched: c.cfg.Clock()}, int64(1+len(t.Versions)))
		return t, nil
	})
	return await[*PublishTimes](ctx, ch, "publish times "+name)
}

// freshTimes returns the cached dates of name younger than PackumentTTL.
func (c *Client) freshTimes(name string) *PublishTimes {
	e, ok := c.times.Get(name)
	if !ok || c.cfg.Clock().Sub(e.fetched) >= c.cfg.PackumentTTL {
		return nil
	}
	return e.t
}

func (c *Client) fetchTimes(ctx context.Context, name, escaped string) (*PublishTimes, error) {
	what := "full packument " + name
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	resp, done, err := c.getDocument(ctx, name, escaped, fullAccept, what)
	if err != nil {
		return nil, err
	}
	// The registry answered: that is all the host's breaker learns. A
	// full document that is over the cap, or too slow to read whole
	// within RequestTimeout, says nothing about the host, and must not
	// open the breaker that installs and fills go through.
	done(nil)
	defer drainClose(resp.Body)
	limit := c.cfg.MaxPackumentTimesBytes
	if resp.ContentLength > limit {
		return &PublishTimes{TooLarge: true}, nil
	}
	body := &limitedReader{r: resp.Body, n: limit}
	vs, err := readTimes(body)
	if err != nil {
		if body.exceeded {
			return &PublishTimes{TooLarge: true}, nil
		}
		return nil, transportError(context.Background(), what+": decoding", err)
	}
	return &PublishTimes{Versions: vs}, nil
}

// readTimes walks a packument's tokens and decodes only its top-level
// "time" object, skipping every other value token by token, so the
// document is never held whole (next's "versions" object alone is tens
// of MB). It stops reading once "time" has been read.
func readTimes(r io.Reader) (map[string]time.Time, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if key, _ := tok.(string); key != "time" {
			if err := skipValue(dec); err != nil {
				return nil, err
			}
			continue
		}
		tok, err = dec.Token()
		if err != nil {
			return nil, err
		}
		if d, ok := tok.(json.Delim); !ok || d != '{' {
			return map[string]time.Time{}, nil // "time": null or a string: no dates
		}
		out := map[string]time.Time{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, _ := tok.(string)
			tok, err = dec.Token()
			if err != nil {
				return nil, err
			}
			if d, ok := tok.(json.Delim); ok {
				if err := skipRest(dec, d); err != nil {
					return nil, err
				}
				continue
			}
			s, _ := tok.(string)
			if !semver.Valid(v) {
				continue
			}
			if at, err := time.Parse(time.RFC3339Nano, s); err == nil {
				out[v] = at.UTC()
			}
		}
		return out, nil
	}
	return map[string]time.Time{}, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("packument: expected %v, found %v", want, tok)
	}
	return nil
}

// skipValue reads the next value, of any depth, without keeping it.
func skipValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); ok {
		return skipRest(dec, d)
	}
	return nil
}

// skipRest reads up to the end of the object or array opened by open.
func skipRest(dec *json.Decoder, open json.Delim) error {
	if open != '{' && open != '[' {
		return fmt.Errorf("packument: unexpected %v", open)
	}
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}
