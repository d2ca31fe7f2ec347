package unavailable

import (
	"errors"
	"net/http"
	"testing"
)

func TestErrorSaysSourceAndStatus(t *testing.T) {
	cause := errors.New("packument p: timed out")
	for _, tt := range []struct {
		e    *Error
		want string
	}{
		{&Error{Source: Registry, Err: cause}, "registry unavailable: packument p: timed out"},
		{&Error{Source: Registry, Status: http.StatusTooManyRequests, Err: cause}, "registry unavailable (HTTP 429): packument p: timed out"},
		{&Error{Source: JSDelivr, Status: http.StatusForbidden, Err: cause}, "jsDelivr unavailable (HTTP 403): packument p: timed out"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if !errors.Is(tt.e, cause) {
			t.Errorf("%v does not unwrap to its cause", tt.e)
		}
	}
}
