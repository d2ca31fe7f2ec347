package config

import (
	"bytes"
	"flag"
	"runtime"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/gendoc"
)

var update = flag.Bool("update", false, "rewrite the generated settings reference in docs/OPERATIONS.md")

// TestEverySettingHasGroupAndDoc: a flag added without a group (b.Group)
// or a usage fails here, and so does one not bound through the Binder
// (which the help, the config file and docs/OPERATIONS.md would miss).
func TestEverySettingHasGroupAndDoc(t *testing.T) {
	_, b, fs := bindAll("pkgscope", envOf(nil), nil)
	seen := map[string]bool{}
	for _, s := range b.Settings() {
		if s.Group == "" {
			t.Errorf("setting %s has no group: put it after a b.Group call", s.Name)
		}
		if strings.TrimSpace(s.Usage) == "" {
			t.Errorf("setting %s has no usage", s.Name)
		}
		if seen[s.Name] {
			t.Errorf("setting %s is bound twice", s.Name)
		}
		seen[s.Name] = true
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !seen[f.Name] {
			t.Errorf("flag %s is not bound through the Binder", f.Name)
		}
	})
	if topics := Topics(b.Settings()); len(topics) < 8 {
		t.Errorf("topics %v: want the settings grouped", topics)
	}
}

// operationsDoc is the reference generated from the settings.
const operationsDoc = "../../docs/OPERATIONS.md"

// TestOperationsDoc: docs/OPERATIONS.md's settings reference is what the
// flag definitions generate; after changing a flag, regenerate it with
// go test ./internal/config -run TestOperationsDoc -update.
func TestOperationsDoc(t *testing.T) {
	var gen bytes.Buffer
	WriteMarkdown(&gen, "pkgscope", Settings())
	gendoc.Check(t, operationsDoc, "pkgscope settings", gen.String(), "go test ./internal/config -run TestOperationsDoc -update", *update)
}

// TestSettingsReadTheSameEverywhere: the generated reference does not
// depend on the machine it was generated on (cores, home directory).
func TestSettingsReadTheSameEverywhere(t *testing.T) {
	gen := func() string {
		var b bytes.Buffer
		WriteMarkdown(&b, "pkgscope", Settings())
		return b.String()
	}
	a := gen()
	procs := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(procs + 3)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if b := gen(); a != b {
		t.Errorf("the settings reference depends on the machine: a default read from it needs an entry in machineDefaults")
	}
}

func TestParseHelp(t *testing.T) {
	for _, tc := range []struct {
		args string
		want HelpRequest
		ok   bool
	}{
		{"", HelpRequest{}, false},
		{"--addr x", HelpRequest{}, false},
		{"-h", HelpRequest{}, true},
		{"--help", HelpRequest{}, true},
		{"--data-dir /d --help store", HelpRequest{Topic: "store"}, true},
		{"--help=grep", HelpRequest{Topic: "grep"}, true},
		{"--help --addr", HelpRequest{}, true},
		{"--help-all", HelpRequest{All: true}, true},
		{"--help-markdown", HelpRequest{Markdown: true}, true},
		{"-- --help", HelpRequest{}, false},
	} {
		got, ok := ParseHelp(strings.Fields(tc.args))
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseHelp(%q) = %+v, %v; want %+v, %v", tc.args, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSelect(t *testing.T) {
	all := Settings()
	names := func(ss []Setting) string {
		var n []string
		for _, s := range ss {
			n = append(n, s.Name)
		}
		return strings.Join(n, " ")
	}
	if got := names(Select(all, "store")); !strings.Contains(got, "data-dir") || !strings.Contains(got, "database-url") || strings.Contains(got, "addr") {
		t.Errorf("--help store: %s", got)
	}
	if got := names(Select(all, "mdn")); got != "mdn-base-url mdn-timeout mdn-cache-bytes" {
		t.Errorf("--help mdn (a word of names): %s", got)
	}
	if got := Select(all, "frobnicate"); len(got) != 0 {
		t.Errorf("--help frobnicate: %v, want none", names(got))
	}
}

// TestUnknownFlagNamesTheClosest: a mistyped flag's error names the
// setting meant, not 250 lines of usage.
func TestUnknownFlagNamesTheClosest(t *testing.T) {
	_, err := Load("pkgscope", []string{"--max-file", "3"}, envOf(nil))
	if err == nil || err.Error() != "unknown flag --max-file; did you mean --max-files?" {
		t.Errorf("--max-file: %v", err)
	}
}

func TestShownDefaults(t *testing.T) {
	for _, tc := range []struct {
		s    Setting
		want string
	}{
		{Setting{Kind: KindDuration, Default: "5m0s"}, "5m"},
		{Setting{Kind: KindDuration, Default: "24h0m0s"}, "24h"},
		{Setting{Kind: KindDuration, Default: "1m30s"}, "1m30s"},
		{Setting{Kind: KindBytes, Default: "67108864"}, "67108864 = 64 MiB"},
		{Setting{Kind: KindBytes, Default: "1000"}, "1000"},
		{Setting{Kind: KindBool, Default: "false"}, ""},
		{Setting{Kind: KindSecret, Default: "postgres://u:pw@h/db"}, ""},
		{Setting{Kind: KindInt, Default: "0", Usage: "most (0: no limit)"}, ""},
		{Setting{Kind: KindString, Default: "", Usage: "dir (default: data-dir/indexes)"}, ""},
	} {
		if got := shownDefault(tc.s); got != tc.want {
			t.Errorf("shownDefault(%+v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}
