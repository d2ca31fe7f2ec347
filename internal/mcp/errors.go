package mcp

import (
	"errors"
	"fmt"
	"math"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pkgscope/pkgscope/internal/explore"
)

// ErrorBody is the structured content of a failed call: the API's error
// body {"error":{"code","message"}}, plus retryAfterSeconds when the
// API would have sent Retry-After.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is one error: a stable code and a message saying what to
// fix.
type ErrorDetail struct {
	Code              string `json:"code"`
	Message           string `json:"message"`
	RetryAfterSeconds int    `json:"retryAfterSeconds,omitempty"`
}

// classed is an error that carries its own class: a remote pkgscope's
// answer (*client.Error), which must be reported as the remote said it.
type classed interface {
	error
	Class() explore.Class
}

// classify is explore.Classify, except that a remote's error keeps the
// class the remote gave it.
func classify(err error) explore.Class {
	var c classed
	if errors.As(err, &c) {
		return c.Class()
	}
	return explore.Classify(err)
}

// fail turns err into a tool error. Internal failures are logged here,
// once, and their message is not shown: it may name store internals, and
// the model cannot act on it. note says where a defaulted version came
// from, so a "no matching version" for a locked version is understood.
func (t *tool) fail(err error, note string) *sdk.CallToolResult {
	class := classify(err)
	body := ErrorBody{Error: ErrorDetail{Code: class.Code, Message: err.Error()}}
	var remote classed
	if !errors.As(err, &remote) { // a remote's message is already redacted
		switch {
		case class.Status == http.StatusInternalServerError && class.Code == "internal":
			t.opt.Logger.Error("explore_npm failed", "err", err)
			body.Error.Message = "internal error (logged by pkgscope)"
		case class.Code == "store_unavailable", class.Code == "timeout":
			// As the API answers them: the store's error names the
			// database's user, name and address, which no caller of
			// the shared /mcp should read.
			t.opt.Logger.Error("explore_npm failed", "err", err)
			body.Error.Message = "the mirror's store is not answering; retry shortly"
		}
	}
	return toolError(body, class, note)
}

// toolError is every tool's failed call, in one form: the text "error
// <code>: <message>", " (try again in Ns)" when the API would send
// Retry-After, then note on a line of its own; the structured content is
// body with retryAfterSeconds.
func toolError(body ErrorBody, class explore.Class, note string) *sdk.CallToolResult {
	if class.RetryAfter > 0 {
		body.Error.RetryAfterSeconds = int(math.Ceil(class.RetryAfter.Seconds()))
	}
	text := fmt.Sprintf("error %s: %s", body.Error.Code, body.Error.Message)
	if body.Error.RetryAfterSeconds > 0 {
		text += fmt.Sprintf(" (try again in %ds)", body.Error.RetryAfterSeconds)
	}
	if note != "" {
		text += "\n" + note
	}
	return &sdk.CallToolResult{
		IsError:           true,
		Content:           []sdk.Content{&sdk.TextContent{Text: text}},
		StructuredContent: body,
	}
}
