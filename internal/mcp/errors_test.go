package mcp

import (
	"context"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkgscope/pkgscope/internal/store"
)

// TestFailHidesStoreAddresses: a store outage through MCP says what the
// API says, never the database's address and user that the driver's
// error carries (the shared /mcp answers any token holder).
func TestFailHidesStoreAddresses(t *testing.T) {
	tl := newTool(nil, Options{}.withDefaults())
	for _, err := range []error{
		fmt.Errorf("reading lib@1.0.0: failed to connect to `user=pkgscope database=pkgscope`: 10.20.30.40:5432: connection refused: %w", store.ErrUnavailable),
		fmt.Errorf("query files of lib@1.0.0 on host=10.20.30.40 user=pkgscope: %w", context.DeadlineExceeded),
	} {
		res := tl.fail(err, "")
		body := res.StructuredContent.(ErrorBody)
		txt := res.Content[0].(*sdk.TextContent).Text
		for _, leak := range []string{"10.20.30.40", "user=pkgscope"} {
			if strings.Contains(body.Error.Message, leak) || strings.Contains(txt, leak) {
				t.Errorf("%v: message %q / text %q shows %q", err, body.Error.Message, txt, leak)
			}
		}
		if body.Error.RetryAfterSeconds == 0 || !strings.Contains(body.Error.Message, "retry") {
			t.Errorf("%v: %+v, want a retry hint", err, body.Error)
		}
	}
}
