package api

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// jsonSerializer is Echo's default without HTML escaping: package files
// are full of <, > and &, and agents read "\u003c" worse than "<".
type jsonSerializer struct{}

func (jsonSerializer) Serialize(c echo.Context, i any, indent string) error {
	enc := json.NewEncoder(c.Response())
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	return enc.Encode(i)
}

func (jsonSerializer) Deserialize(c echo.Context, i any) error {
	if err := json.NewDecoder(c.Request().Body).Decode(i); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("not valid JSON: %v", err)).SetInternal(err)
	}
	return nil
}
