package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pkgscope/pkgscope/internal/explore"
)

func (s *Server) explore(c echo.Context) error {
	req, err := decode(c)
	if err != nil {
		return err
	}
	c.Set("action", req.Action) // metrics.ActionKey: latency by action
	res, err := explore.Do(c.Request().Context(), s.svc, *req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// decode reads the body strictly: unknown fields are a 400 that names the
// field, since a misspelt field would otherwise be silently ignored.
func decode(c echo.Context) (*explore.Request, error) {
	ct := c.Request().Header.Get(echo.HeaderContentType)
	if ct != "" && !strings.HasPrefix(ct, echo.MIMEApplicationJSON) && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		// curl -d sends form-urlencoded by default; its body is still our JSON.
		return nil, echo.NewHTTPError(http.StatusUnsupportedMediaType, "send a JSON body with Content-Type: application/json")
	}
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	var req explore.Request
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
