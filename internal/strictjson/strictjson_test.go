package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

type file struct {
	Name    string `json:"name"`
	Content string `json:"content,omitempty"`
}

type common struct {
	MaxBytes int `json:"maxBytes,omitempty"`
}

// selfDecoding decodes any JSON itself: its keys are its own business.
type selfDecoding struct{ raw string }

func (s *selfDecoding) UnmarshalJSON(b []byte) error { s.raw = string(b); return nil }

type body struct {
	common
	PackageName string            `json:"packageName,omitempty"`
	Lockfile    *file             `json:"lockfile,omitempty"`
	Files       []file            `json:"files,omitempty"`
	Workspaces  map[string]string `json:"workspaces,omitempty"`
	ByFolder    map[string]file   `json:"byFolder,omitempty"`
	Custom      selfDecoding      `json:"custom"`
	Untagged    int
	Skipped     int `json:"-"`
	hidden      int
}

func TestUnmarshalRefusesKeysNotSpeltAsAField(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		object   string   // the refused keys' object
		names    []string // the refused keys
		msg      string   // in the message
	}{
		{"top-level case", `{"PackageName":"react"}`, "", []string{"PackageName"},
			`unknown field "PackageName": did you mean "packageName"?`},
		{"all lower case", `{"packagename":"react"}`, "", []string{"packagename"}, `did you mean "packageName"?`},
		{"embedded field's case", `{"maxbytes":10}`, "", []string{"maxbytes"}, `did you mean "maxBytes"?`},
		{"untagged field's case", `{"untagged":1}`, "", []string{"untagged"}, `did you mean "Untagged"?`},
		{"nested object", `{"lockfile":{"Name":"package-lock.json","content":"{}"}}`, "lockfile", []string{"Name"},
			`unknown field "lockfile.Name": did you mean "name"?`},
		{"array element", `{"files":[{"name":"a"},{"name":"b","CONTENT":"x"}]}`, "files[1]", []string{"CONTENT"},
			`unknown field "files[1].CONTENT": did you mean "content"?`},
		{"map value", `{"byFolder":{"packages/app":{"nmae":"x"}}}`, "byFolder.packages/app", []string{"nmae"},
			`byFolder.packages/app's fields are name, content`},
		{"unknown, listing the fields", `{"pkg":"react","zzz":1}`, "", []string{"pkg", "zzz"},
			"the fields are maxBytes, packageName, lockfile, files, workspaces, byFolder, custom, Untagged"},
		{"a skipped field's name", `{"Skipped":1}`, "", []string{"Skipped"}, `unknown field "Skipped"`},
		{"an unexported field's name", `{"hidden":1}`, "", []string{"hidden"}, `unknown field "hidden"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b body
			err := Unmarshal([]byte(tc.in), &b)
			var ue *UnknownFieldError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v, want an *UnknownFieldError", err)
			}
			if ue.Object != tc.object || !reflect.DeepEqual(ue.Names, tc.names) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("object %q names %q: %s; want object %q names %q, a message with %q", ue.Object, ue.Names, err, tc.object, tc.names, tc.msg)
			}
			// encoding/json alone takes what only differs in case.
			dec := json.NewDecoder(strings.NewReader(tc.in))
			dec.DisallowUnknownFields()
			if tc.msg[len(tc.msg)-1] == '?' && dec.Decode(&body{}) != nil {
				t.Errorf("encoding/json refused %s too: this case guards nothing", tc.in)
			}
		})
	}
}

func TestUnmarshalDecodesExactNames(t *testing.T) {
	in := `{"maxBytes":5,"packageName":"react","lockfile":{"name":"yarn.lock","content":"x"},"files":[{"name":"a"}],` +
		`"workspaces":{"Packages/App":"{}"},"byFolder":{"A":{"name":"n"}},"custom":{"AnyKey":1},"Untagged":2}`
	var got body
	if err := Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	var want body
	if err := json.Unmarshal([]byte(in), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || got.Custom.raw != `{"AnyKey":1}` || got.Workspaces["Packages/App"] != "{}" {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestUnmarshalFillsWhatItCan: a refused body still fills the fields it
// named right, so a caller can word the refusal for its action.
func TestUnmarshalFillsWhatItCan(t *testing.T) {
	var b body
	err := Unmarshal([]byte(`{"PackageName":"react","lockfile":{"name":"x"}}`), &b)
	if err == nil || b.Lockfile == nil || b.Lockfile.Name != "x" {
		t.Errorf("err %v, lockfile %+v; want the error and the lockfile decoded", err, b.Lockfile)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	var se *json.SyntaxError
	if err := Unmarshal([]byte(`{"packageName":`), &body{}); !errors.As(err, &se) {
		t.Errorf("truncated: %v, want a syntax error", err)
	}
	if err := Unmarshal([]byte(`{"packageName":"a"} {}`), &body{}); !errors.As(err, &se) {
		t.Errorf("two values: %v, want a syntax error", err)
	}
	var te *json.UnmarshalTypeError
	if err := Unmarshal([]byte(`{"lockfile":"x"}`), &body{}); !errors.As(err, &te) {
		t.Errorf("a string for an object: %v, want a type error", err)
	}
	if err := Unmarshal([]byte(`{"lockfile":"x","Zz":1}`), &body{}); !errors.As(err, &te) {
		t.Errorf("a type error before an unknown key: %v, want the type error (the check stops at it)", err)
	}
}

// FuzzUnmarshal: whatever Unmarshal accepts, encoding/json with
// DisallowUnknownFields decodes to the same value (Unmarshal only ever
// refuses more, never decodes otherwise).
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{`{}`, `{"packageName":"a"}`, `{"PACKAGENAME":"a"}`, `{"lockfile":{"Name":"x"}}`,
		`{"files":[{"name":"a"},{"Content":"b"}]}`, `{"byFolder":{"x":{"name":"y"}}}`, `null`, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got body
		if Unmarshal(data, &got) != nil {
			return
		}
		var want body
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("Unmarshal took %q, encoding/json refused it: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %+v, encoding/json %+v", data, got, want)
		}
	})
}

// failingBody fails every read with err.
type failingBody struct{ err error }

func (b failingBody) Read([]byte) (int, error) { return 0, b.err }

// quotable is a read error that says it names no address.
type quotable struct{}

func (quotable) Error() string { return "the body did not arrive in time (setting read-timeout)" }
func (quotable) Quotable()     {}

// TestReadBodyQuotesOnlyQuotableErrors: a transport's read error names the
// server's and the caller's addresses, so ReadBody's 400 never quotes it;
// an error that marks itself Quotable (api.BodyErrors') is quoted, since
// it says what to fix. The attack review found the quote reaching callers.
func TestReadBodyQuotesOnlyQuotableErrors(t *testing.T) {
	transport := errors.New("read tcp 10.0.3.7:7878->10.0.3.1:51234: connection reset by peer")
	for _, tc := range []struct {
		err        error
		want, deny string
	}{
		{transport, "the connection failed", "10.0.3.7"},
		{quotable{}, "setting read-timeout", "10.0.3.7"},
	} {
		r := httptest.NewRequest("POST", "/", io.NopCloser(failingBody{tc.err}))
		_, err := ReadBody(r, "max-body-bytes")
		var he *echo.HTTPError
		if !errors.As(err, &he) {
			t.Fatalf("ReadBody with a body failing %q: %v, want an *echo.HTTPError", tc.err, err)
		}
		// The message is what the caller reads; the internal error is
		// for the log only.
		if msg := fmt.Sprint(he.Message); he.Code != 400 || !strings.Contains(msg, tc.want) || strings.Contains(msg, tc.deny) {
			t.Errorf("ReadBody with a body failing %q: %d %q, want 400 holding %q and not %q", tc.err, he.Code, msg, tc.want, tc.deny)
		}
	}
}
