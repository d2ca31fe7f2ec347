package main

import (
	"errors"
	"flag"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.String("remote", "", "")
	fs.String("project", "", "")
	fs.Int64("max-manifest-bytes", 0, "")
	fs.Bool("structured", false, "")
	cases := []struct {
		args       string
		own, store string
	}{
		{"", "", ""},
		{"--project /p", "--project /p", ""},
		{"--project=/p --data-dir /d", "--project=/p", "--data-dir /d"},
		{"--data-dir=/d -remote http://x --max-read-limit 5", "-remote http://x", "--data-dir=/d --max-read-limit 5"},
		{"--max-manifest-bytes 3 --database-url postgres://x", "--max-manifest-bytes 3", "--database-url postgres://x"},
		{"-h", "-h", ""},
		{"--project /p stray --remote x", "--project /p", "stray --remote x"},
		// The mirror's booleans take no value: --structured stays mcp's.
		{"--jsdelivr-fallback --structured --data-dir /d", "--structured", "--jsdelivr-fallback --data-dir /d"},
		{"--warm-in-process=false --project /p", "--project /p", "--warm-in-process=false"},
	}
	for _, tc := range cases {
		own, rest := splitArgs(strings.Fields(tc.args), fs)
		if !slices.Equal(own, strings.Fields(tc.own)) || !slices.Equal(rest, strings.Fields(tc.store)) {
			t.Errorf("splitArgs(%q) = %q, %q; want %q, %q", tc.args, own, rest, tc.own, tc.store)
		}
	}
}

func TestRunMCPUsageErrors(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	env := func(string) string { return "" }
	dir := t.TempDir()
	cases := []struct{ args, msg string }{
		{"--remote http://x --data-dir /d --project " + dir, "store flags"},
		{"--remote ftp://x --project " + dir, "--remote"},
		{"--project " + dir + "/missing", "--project"},
		{"--project " + dir + " --max-read-limit 0", "max-read-limit"},
	}
	for _, tc := range cases {
		err := runMCP(t.Context(), strings.Fields(tc.args), log, env, nil)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("mirror mcp %s: %v, want a usage error about %s", tc.args, err, tc.msg)
		}
	}
}
