package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/strictjson"
)

func (s *Server) explore(c echo.Context) error {
	req, err := decode(c)
	if err != nil {
		return err
	}
	c.Set("action", req.Action) // metrics.ActionKey: latency by action
	res, err := explore.Do(c.Request().Context(), s.ex, *req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// decode reads the body strictly: an unknown field, or one spelt in
// another case, is a 400 that names the field meant
// (explore.UnknownFields, as the MCP tool's), since it would otherwise be
// silently ignored or taken in a spelling MCP refuses.
func decode(c echo.Context) (*explore.Request, error) {
	var req explore.Request
	if err := decodeStrict(c, &req); err != nil {
		// strictjson decodes the rest of the body, so req.Action is
		// known wherever in the body the field was.
		var ue *strictjson.UnknownFieldError
		if errors.As(err, &ue) && ue.Object == "" {
			// decodeStrict kept the first names (trimUnknown).
			ie := explore.UnknownFields(ue.Names, req.Action)
			var many *explore.MoreUnknown
			if errors.As(err, &many) {
				ie.Err = &explore.MoreUnknown{Err: ie.Err, More: many.More}
			}
			return nil, ie
		}
		return nil, err
	}
	return &req, nil
}

// decodeStrict reads one JSON object into v with strictjson: keys not
// spelt as a field are a 400 naming the field, since a misspelt field
// would otherwise be silently ignored (or, in another case, taken).
// /v1/explore and /v1/webdocs share it.
func decodeStrict(c echo.Context, v any) error {
	ct := c.Request().Header.Get(echo.HeaderContentType)
	if ct != "" && !strings.HasPrefix(ct, echo.MIMEApplicationJSON) && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		// curl -d sends form-urlencoded by default; its body is still our
		// JSON. (A browser's cross-site form is refused by HostGuard.)
		return echo.NewHTTPError(http.StatusUnsupportedMediaType, "send a JSON body with Content-Type: application/json")
	}
	// A sized body over the limit is refused before the handler; a
	// chunked one fails here, mid-read.
	data, err := strictjson.ReadBody(c.Request(), "max-body-bytes")
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return inputErr("body", "empty: send a JSON object with an action")
	}
	if err := strictjson.Unmarshal(data, v); err != nil {
		if strictjson.TrailingData(err) {
			return inputErr("body", "trailing data after the JSON object")
		}
		var ue *strictjson.UnknownFieldError
		if errors.As(err, &ue) {
			if more := trimUnknown(ue); more > 0 {
				err = &explore.MoreUnknown{Err: err, More: more}
			}
			return &explore.InputError{Field: ue.Path(ue.Names[0]), Err: err}
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return inputErr(te.Field, fmt.Sprintf("must be %s, not a JSON %s", jsonKind(te.Type), te.Value))
		}
		return inputErr("body", "not valid JSON for this endpoint: "+err.Error())
	}
	return nil
}

// trimUnknown keeps the first explore.MaxNamedFields of ue's names and
// returns how many it dropped.
func trimUnknown(ue *strictjson.UnknownFieldError) int {
	more := max(0, len(ue.Names)-explore.MaxNamedFields)
	ue.Names = ue.Names[:len(ue.Names)-more]
	return more
}

// jsonKind says in JSON's words what a field of type t takes, for a value
// of the wrong type ("maxMatches":"3"): Go's own message names Go types.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number (e.g. 3, without quotes)"
	case reflect.Float32, reflect.Float64:
		return "a number (without quotes)"
	case reflect.Bool:
		return "true or false (without quotes)"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "an object"
}

func inputErr(field, msg string) error {
	return &explore.InputError{Field: field, Err: errors.New(msg)}
}
