package warm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"
)

// readBody reads a POST /v1/warm body into one buffer of its declared
// size and decodes it strictly (unknown fields and trailing values are
// errors) without a json.Decoder: a Decoder copies its input into a
// buffer it doubles as it goes, about four times the body in all, which
// for a 16 MiB lockfile was 90 MiB of RSS before the parse began (65 MiB
// of it gone with this). Here a
// body costs itself plus its decoded strings.
func readBody(r *http.Request) (PostBody, error) {
	var body PostBody
	buf := bytes.NewBuffer(make([]byte, 0, max(r.ContentLength, 0)+bytes.MinRead)) // the body limit has refused a larger ContentLength
	if _, err := buf.ReadFrom(r.Body); err != nil {
		var he *echo.HTTPError // the server's body limit
		if errors.As(err, &he) {
			return body, he
		}
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return body, echo.NewHTTPError(http.StatusRequestEntityTooLarge)
		}
		return body, echo.NewHTTPError(http.StatusBadRequest, "reading the body: "+err.Error())
	}
	data := buf.Bytes()
	if err := json.Unmarshal(data, &body); err != nil {
		if strings.Contains(err.Error(), "after top-level value") {
			return body, echo.NewHTTPError(http.StatusBadRequest, "the body holds more than one JSON value")
		}
		return body, echo.NewHTTPError(http.StatusBadRequest, "decoding the body: "+err.Error())
	}
	var fields struct {
		Lockfile map[string]skipped `json:"lockfile"`
	}
	if err := json.Unmarshal(data, &fields); err != nil {
		return body, echo.NewHTTPError(http.StatusBadRequest, "decoding the body: "+err.Error())
	}
	if err := knownFields(data, "", "specs", "lockfile"); err != nil {
		return body, err
	}
	for k := range fields.Lockfile {
		if k != "name" && k != "content" && k != "packageJson" {
			return body, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("decoding the body: unknown field %q", "lockfile."+k))
		}
	}
	return body, nil
}

// knownFields refuses an object in data with a field not in known. Values
// are skipped, not copied.
func knownFields(data []byte, prefix string, known ...string) error {
	var fields map[string]skipped
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil // not an object: Unmarshal into the typed body said what is wrong
	}
	var unknown []string
	for k := range fields {
		if !slices.Contains(known, k) {
			unknown = append(unknown, prefix+k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("decoding the body: unknown field %q", unknown[0]))
	}
	return nil
}

// skipped is a JSON value decoded to nothing: encoding/json hands an
// Unmarshaler a slice of its input, so nothing is copied.
type skipped struct{}

// UnmarshalJSON implements json.Unmarshaler.
func (*skipped) UnmarshalJSON([]byte) error { return nil }
