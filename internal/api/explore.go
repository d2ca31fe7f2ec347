package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/explore"
)

// exploreRequest is the explore_npm tool's input: one object for every
// action; each action reads the fields it needs.
type exploreRequest struct {
	Action      string `json:"action"`
	PackageName string `json:"packageName"`
	Version     string `json:"version"`
	// glob
	Patterns stringList `json:"patterns"`
	// read
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
	Column int    `json:"column"`
	// grep
	Pattern           string     `json:"pattern"`
	CaseInsensitive   bool       `json:"caseInsensitive"`
	FixedStrings      bool       `json:"fixedStrings"`
	WholeWord         bool       `json:"wholeWord"`
	Include           stringList `json:"include"`
	Exclude           stringList `json:"exclude"`
	ContextLines      int        `json:"contextLines"`
	MaxMatches        int        `json:"maxMatches"`
	MaxMatchesPerFile int        `json:"maxMatchesPerFile"`
}

// stringList accepts a JSON string or an array of strings.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte(`"`)) {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = []string{s}
		return nil
	}
	var ss []string
	if err := json.Unmarshal(b, &ss); err != nil {
		return errors.New("want a string or an array of strings")
	}
	*l = ss
	return nil
}

func (s *Server) explore(c echo.Context) error {
	req, err := decode(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	t := explore.Target{PackageName: req.PackageName, Version: req.Version}
	var res any
	switch req.Action {
	case "list":
		res, err = s.svc.List(ctx, t)
	case "glob":
		res, err = s.svc.Glob(ctx, t, req.Patterns)
	case "read":
		res, err = s.svc.Read(ctx, explore.ReadRequest{Target: t, Path: req.Path, Offset: req.Offset, Limit: req.Limit, Column: req.Column})
	case "grep":
		res, err = s.svc.Grep(ctx, explore.GrepRequest{
			Target: t, Pattern: req.Pattern, CaseInsensitive: req.CaseInsensitive, FixedStrings: req.FixedStrings,
			WholeWord: req.WholeWord, Include: req.Include, Exclude: req.Exclude, ContextLines: req.ContextLines,
			MaxMatches: req.MaxMatches, MaxMatchesPerFile: req.MaxMatchesPerFile,
		})
	case "":
		return inputErr("action", `missing: give "list", "glob", "read" or "grep"`)
	default:
		return inputErr("action", fmt.Sprintf("unknown action %q: use list, glob, read or grep", req.Action))
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// decode reads the body strictly: unknown fields are a 400 that names the
// field, since a misspelt field would otherwise be silently ignored.
func decode(c echo.Context) (*exploreRequest, error) {
	ct := c.Request().Header.Get(echo.HeaderContentType)
	if ct != "" && !strings.HasPrefix(ct, echo.MIMEApplicationJSON) && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		// curl -d sends form-urlencoded by default; its body is still our JSON.
		return nil, echo.NewHTTPError(http.StatusUnsupportedMediaType, "send a JSON body with Content-Type: application/json")
	}
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	var req exploreRequest
	if err := dec.Decode(&req); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, echo.ErrStatusRequestEntityTooLarge
		}
		if errors.Is(err, io.EOF) {
			return nil, inputErr("body", "empty: send a JSON object with an action")
		}
		return nil, inputErr("body", "not valid JSON for this endpoint: "+err.Error())
	}
	if dec.More() {
		return nil, inputErr("body", "trailing data after the JSON object")
	}
	return &req, nil
}

func inputErr(field, msg string) error {
	return &explore.InputError{Field: field, Err: errors.New(msg)}
}
