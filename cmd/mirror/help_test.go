package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/config"
)

// TestShortHelpFitsAScreen: pkgscope --help is one screen (40 lines of
// at most 80 columns): the commands first, then the settings most users
// set, then where the rest is.
func TestShortHelpFitsAScreen(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := writeHelp(&out, &errOut, config.HelpRequest{}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	help := out.String()
	t.Log("\n" + help)
	lines := strings.Split(strings.TrimSuffix(help, "\n"), "\n")
	if len(lines) > 40 {
		t.Errorf("--help is %d lines, want at most 40", len(lines))
	}
	for i, l := range lines {
		if len(l) > 80 {
			t.Errorf("line %d is %d columns: %q", i+1, len(l), l)
		}
	}
	// In this order: commands, common settings, the way to the rest.
	at := 0
	for _, w := range []string{"Usage:", "pkgscope serve", "pkgscope mcp", "pkgscope hash-token", "pkgscope version",
		"Settings most users set:", "PKGSCOPE_DATA_DIR", "pkgscope --help-all", "pkgscope --help TOPIC", "docs/OPERATIONS.md"} {
		i := strings.Index(help[at:], w)
		if i < 0 {
			t.Errorf("--help lacks %q after what comes before it", w)
			continue
		}
		at += i
	}
	settings := help[strings.Index(help, "Settings most users set:"):strings.Index(help, "PKGSCOPE_DATA_DIR")]
	for _, w := range []string{"--addr", "--data-dir", "--database-url", "--redis-url", "--tokens-file", "--public-url", "--config"} {
		if !strings.Contains(settings, "  "+w+" ") {
			t.Errorf("--help's common settings lack %s", w)
		}
	}
	known := map[string]bool{}
	for _, s := range config.Settings() {
		known[s.Name] = true
	}
	for _, c := range common {
		if !known[c.name] {
			t.Errorf("common setting %s is no setting", c.name)
		}
	}
}

// TestHelpAllAndTopics: --help-all lists every setting under its group's
// title; --help TOPIC lists one group; an unknown topic names the topics.
func TestHelpAllAndTopics(t *testing.T) {
	all := config.Settings()
	var out, errOut bytes.Buffer
	writeHelp(&out, &errOut, config.HelpRequest{All: true})
	for _, s := range all {
		if !strings.Contains(out.String(), "  --"+s.Name+" ") && !strings.Contains(out.String(), "  --"+s.Name+"\n") {
			t.Errorf("--help-all lacks --%s", s.Name)
		}
	}
	for _, topic := range config.Topics(all) {
		if !strings.Contains(out.String(), "(--help "+topic+"):\n") {
			t.Errorf("--help-all lacks the group of topic %s", topic)
		}
	}
	out.Reset()
	writeHelp(&out, &errOut, config.HelpRequest{Topic: "store"})
	if s := out.String(); !strings.HasPrefix(s, "Store (--help store):\n") || !strings.Contains(s, "--database-url URL") || strings.Contains(s, "--addr") {
		t.Errorf("--help store:\n%s", s)
	}
	out.Reset()
	if code := writeHelp(&out, &errOut, config.HelpRequest{Topic: "frobnicate"}); code != 2 || !strings.Contains(errOut.String(), "topics: server, store") {
		t.Errorf("--help frobnicate: exit %d, %q", code, errOut.String())
	}
}

// TestMCPHelp: pkgscope mcp -h is short and lists mcp's own flags.
func TestMCPHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	fs, _, _, _, _, _ := mcpFlagSet(func(string) string { return "" })
	if code := writeMCPHelp(&out, &errOut, fs, config.HelpRequest{}); code != 0 {
		t.Fatal(code)
	}
	help := out.String()
	if n := strings.Count(help, "\n"); n > 40 {
		t.Errorf("mcp -h is %d lines", n)
	}
	for _, w := range append([]string{"Usage: pkgscope mcp"}, "--project DIR", "--remote URL", "--token TOKEN", "--structured", "--max-manifest-bytes", "--help-all") {
		if !strings.Contains(help, w) {
			t.Errorf("mcp -h lacks %q:\n%s", w, help)
		}
	}
}

func TestHashTokenHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := hashTokenMain([]string{"-h"}, strings.NewReader(""), &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "Usage: pkgscope hash-token") {
		t.Errorf("hash-token -h: exit %d, %q", code, out.String())
	}
	out.Reset()
	if code := hashTokenMain([]string{"s3cret-token"}, strings.NewReader(""), &out, &errOut); code != 2 || strings.Contains(errOut.String(), "s3cret") {
		t.Errorf("hash-token with an argument: exit %d, %q; want 2 without echoing it", code, errOut.String())
	}
}

func TestUnknownCommand(t *testing.T) {
	if err := unknownCommand("mcpp"); err == nil || !strings.Contains(err.Error(), "did you mean mcp?") {
		t.Errorf("mcpp: %v", err)
	}
}
