package upstream_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/upstream"
)

// TestInWordsNamesNoUpstream: the registry, jsDelivr and MDN clients all
// put transport errors in words here, so the words name none of them (an
// MDN note once read "the registry's host name does not resolve", which
// sent a model to conclude npm was down) and no address; the original
// stays in the chain for errors.As and the log.
func TestInWordsNamesNoUpstream(t *testing.T) {
	dns := &net.DNSError{Err: "no such host", Name: "internal.example", IsNotFound: true}
	err := upstream.InWords(dns)
	if got := err.Error(); got != "its host name does not resolve" {
		t.Errorf("InWords(a failed lookup) = %q", got)
	}
	var back *net.DNSError
	if !errors.As(err, &back) || !strings.Contains(upstream.Detail(err), "internal.example") {
		t.Errorf("the lookup error is lost: As %v, Detail %q", errors.As(err, &back), upstream.Detail(err))
	}
}
