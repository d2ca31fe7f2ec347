// Package strictjson decodes the API's JSON request bodies strictly: every
// object key must name a field of the Go struct it lands in, spelt
// exactly. encoding/json matches keys to fields ignoring case, even with
// DisallowUnknownFields, so {"PackageName":"react"} and
// {"packagename":"react"} used to fill packageName; the API documents one
// spelling, MCP's schema takes only that one, and a body that works by
// accident teaches a model a name the other interface refuses. POST
// /v1/explore, /v1/webdocs, /v1/warm and /v1/projects read their bodies
// with ReadBody and decode them with Unmarshal.
package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
)

// UnknownFieldError is an object's keys that name none of its fields
// exactly. A key that differs from a field only in case names that field
// in the message.
type UnknownFieldError struct {
	// Object is where the keys were: "" for the body itself, else a path
	// such as "lockfile" or "packages[2]".
	Object string
	// Names are the unknown keys as sent, sorted.
	Names []string
	// Fields are the object's field names, in the struct's order.
	Fields []string
}

// Error says each key, with the field meant when only its case is wrong,
// else the object's fields.
func (e *UnknownFieldError) Error() string {
	var msgs []string
	guessed := true
	for _, n := range e.Names {
		msg := fmt.Sprintf("unknown field %q", e.Path(n))
		if f := e.CaseOf(n); f != "" {
			msg += fmt.Sprintf(": did you mean %q? (field names are case-sensitive)", f)
		} else {
			guessed = false
		}
		msgs = append(msgs, msg)
	}
	if !guessed {
		where := "the fields are "
		if e.Object != "" {
			where = e.Object + "'s fields are "
		}
		msgs = append(msgs, where+strings.Join(e.Fields, ", "))
	}
	return strings.Join(msgs, "; ")
}

// Path is name's full path in the body ("lockfile.Name").
func (e *UnknownFieldError) Path(name string) string {
	if e.Object == "" {
		return name
	}
	return e.Object + "." + name
}

// CaseOf is the field name differs from only in case, or "".
func (e *UnknownFieldError) CaseOf(name string) string {
	for _, f := range e.Fields {
		if strings.EqualFold(f, name) {
			return f
		}
	}
	return ""
}

// Unmarshal decodes data, one JSON value, into v (a pointer) as
// json.Unmarshal does, and refuses keys that name no field exactly: it
// returns the first object's *UnknownFieldError (v is still filled as
// far as it could be, so a caller can read what the rest of the body
// said), a *json.SyntaxError for malformed JSON (v untouched), else
// json.Unmarshal's error.
//
// Values are not copied to be checked: the check keeps slices of data
// (encoding/json hands an Unmarshaler a slice of its input), so a 16 MiB
// lockfile in a body costs no second copy.
func Unmarshal(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return json.Unmarshal(data, v) // its InvalidUnmarshalError
	}
	unknown, err := check(data, t.Elem(), "")
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil && unknown == nil {
		return err
	}
	if unknown != nil {
		return unknown
	}
	return nil
}

// span is a JSON value left undecoded: a slice of the input, not a copy.
type span []byte

// UnmarshalJSON implements json.Unmarshaler.
func (s *span) UnmarshalJSON(b []byte) error { *s = b; return nil }

var (
	unmarshaler     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// check returns the first object in data, decoded as t, with keys that
// are no field of its struct. A value that does not have t's shape is
// left to json.Unmarshal to report.
func check(data []byte, t reflect.Type, path string) (*UnknownFieldError, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if !needsCheck(t) {
		return nil, nil
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]span
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, err
		}
		fs := fieldsOf(t)
		var unknown []string
		for _, k := range sortedKeys(obj) {
			f, ok := fs.byName[k]
			if !ok {
				unknown = append(unknown, k)
				continue
			}
			if ue, err := check(obj[k], f, join(path, k)); ue != nil || err != nil {
				return ue, err
			}
		}
		if len(unknown) > 0 {
			return &UnknownFieldError{Object: path, Names: unknown, Fields: fs.names}, nil
		}
	case reflect.Slice, reflect.Array:
		var arr []span
		if err := json.Unmarshal(data, &arr); err != nil {
			return nil, err
		}
		for i, el := range arr {
			if ue, err := check(el, t.Elem(), path+"["+strconv.Itoa(i)+"]"); ue != nil || err != nil {
				return ue, err
			}
		}
	case reflect.Map:
		var obj map[string]span
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, err
		}
		for _, k := range sortedKeys(obj) {
			if ue, err := check(obj[k], t.Elem(), join(path, k)); ue != nil || err != nil {
				return ue, err
			}
		}
	}
	return nil, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys(m map[string]span) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// needsCheck reports whether a value of type t can hold an object that
// decodes into a struct's fields: a struct, or a container of one, that
// decodes itself with no UnmarshalJSON or UnmarshalText of its own.
func needsCheck(t reflect.Type) bool {
	if v, ok := needs.Load(t); ok {
		return v.(bool)
	}
	needs.Store(t, false) // a recursive type's inner mention
	n := false
	switch {
	case reflect.PointerTo(t).Implements(unmarshaler), reflect.PointerTo(t).Implements(textUnmarshaler):
	case t.Kind() == reflect.Pointer:
		n = needsCheck(t.Elem())
	case t.Kind() == reflect.Struct:
		n = true
	case t.Kind() == reflect.Slice, t.Kind() == reflect.Array, t.Kind() == reflect.Map:
		n = needsCheck(t.Elem())
	}
	needs.Store(t, n)
	return n
}

var needs sync.Map // reflect.Type → bool

// structFields are a struct type's JSON field names, as encoding/json
// names them: the tag's name, else the Go name; embedded structs'
// fields promoted.
type structFields struct {
	names  []string
	byName map[string]reflect.Type
}

var fieldCache sync.Map // reflect.Type → *structFields

func fieldsOf(t reflect.Type) *structFields {
	if v, ok := fieldCache.Load(t); ok {
		return v.(*structFields)
	}
	fs := &structFields{byName: map[string]reflect.Type{}}
	addFields(fs, t)
	fieldCache.Store(t, fs)
	return fs
}

func addFields(fs *structFields, t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			addFields(fs, ft)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := fs.byName[name]; !dup {
			fs.names = append(fs.names, name)
			fs.byName[name] = f.Type
		}
	}
}

// ReadBody reads r's body into one buffer of its declared size: a
// json.Decoder would copy it into a buffer it doubles as it goes, about
// four times the body in all (for a 16 MiB lockfile, 90 MiB of RSS
// before the parse began; 65 MiB of it gone with this). A
// body over the server's limit is an *echo.HTTPError of status 413 naming
// setting, the limit that applies to r's route.
func ReadBody(r *http.Request, setting string) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, max(r.ContentLength, 0)+bytes.MinRead)) // the body limit has refused a larger ContentLength
	if _, err := buf.ReadFrom(r.Body); err != nil {
		var he *echo.HTTPError // Echo's body limit
		var tooLarge *http.MaxBytesError
		if errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge || errors.As(err, &tooLarge) {
			return nil, echo.NewHTTPError(http.StatusRequestEntityTooLarge, "the body is over the limit (setting "+setting+")")
		}
		var q Quotable
		if errors.As(err, &q) {
			return nil, echo.NewHTTPError(http.StatusBadRequest, "reading the body: "+q.Error()).SetInternal(err)
		}
		// A transport's error names the mirror's and the caller's
		// addresses ("read tcp 10.0.3.7:7878->..."): it is kept for the
		// log, never quoted.
		return nil, echo.NewHTTPError(http.StatusBadRequest, "reading the body: the connection failed before the whole body arrived").SetInternal(err)
	}
	return buf.Bytes(), nil
}

// Quotable is a body read error whose text names no address, credential
// or path, so ReadBody's 400 may quote it (api.BodyErrors' errors, which
// say what to fix); any other read error is replaced by a fixed phrase.
type Quotable interface {
	error
	// Quotable marks the type; it does nothing.
	Quotable()
}

// DecodeBody reads r's body (ReadBody) and decodes it into v (Unmarshal).
// A body that does not decode is an *echo.HTTPError of status 400 saying
// why, which wraps Unmarshal's error.
func DecodeBody(r *http.Request, v any, setting string) error {
	data, err := ReadBody(r, setting)
	if err != nil {
		return err
	}
	if err := Unmarshal(data, v); err != nil {
		if TrailingData(err) {
			return echo.NewHTTPError(http.StatusBadRequest, "the body holds more than one JSON value").SetInternal(err)
		}
		return echo.NewHTTPError(http.StatusBadRequest, "decoding the body: "+err.Error()).SetInternal(err)
	}
	return nil
}

// TrailingData reports whether err is Unmarshal's for a body with more
// after its JSON value.
func TrailingData(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value")
}
