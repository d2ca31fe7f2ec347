// Package docs_test checks the documentation the way a reader meets it:
// README.md fits two screens and connects an agent early, its test command
// is the one CI runs, and every relative link and docs/*.md mention in
// README.md and docs/*.md leads somewhere that exists.
package docs_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// readmeMaxBytes is the README's budget: about two screens of prose and
// commands (issue 26 found a 56 KB README that took 34 minutes to read).
const readmeMaxBytes = 12 << 10

// agentConfigMaxLine is the last line on which the README's first agent
// configuration may start: within the first screen or so of scrolling.
const agentConfigMaxLine = 80

func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docs is README.md and every docs/*.md, as paths relative to the root.
func docs(t *testing.T) []string {
	t.Helper()
	md, err := filepath.Glob(filepath.Join(root(t), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, m := range md {
		out = append(out, filepath.Join("docs", filepath.Base(m)))
	}
	return out
}

func TestReadmeFitsItsBudget(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > readmeMaxBytes {
		t.Errorf("README.md is %d bytes, over its budget of %d: move reference material to docs/", len(b), readmeMaxBytes)
	}
}

func TestReadmeConnectsAnAgentEarly(t *testing.T) {
	s := bufio.NewScanner(strings.NewReader(read(t, filepath.Join(root(t), "README.md"))))
	for n := 1; s.Scan(); n++ {
		if strings.HasPrefix(s.Text(), "claude mcp add ") {
			if n > agentConfigMaxLine {
				t.Errorf("README.md's first agent configuration is on line %d, after line %d", n, agentConfigMaxLine)
			}
			return
		}
	}
	t.Error("README.md has no `claude mcp add` line: say how to connect an agent")
}

// TestReadmeTestCommandIsWhatCIRuns: .ci/run execs one command; the README
// must give exactly that command, so that what a contributor runs is what
// CI runs.
func TestReadmeTestCommandIsWhatCIRuns(t *testing.T) {
	var cmd string
	for _, line := range strings.Split(read(t, filepath.Join(root(t), ".ci", "run")), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "exec "); ok {
			cmd = strings.TrimSpace(rest)
		}
	}
	if cmd == "" {
		t.Fatal(".ci/run has no `exec COMMAND` line")
	}
	inCode := false
	for _, line := range strings.Split(read(t, filepath.Join(root(t), "README.md")), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		code, _, _ := strings.Cut(line, "#")
		if inCode && strings.TrimSpace(code) == cmd {
			return
		}
	}
	t.Errorf("README.md has no code line running %q, the command .ci/run execs", cmd)
}

var (
	// mdLink matches [text](target) and ![alt](target); target stops at
	// whitespace or the closing parenthesis.
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// docMention matches a docs/NAME.md named in prose or code.
	docMention = regexp.MustCompile(`\bdocs/[A-Za-z0-9_-]+\.md\b`)
	heading    = regexp.MustCompile("^#{1,6} +(.+?) *#*$")
)

// anchors are the fragment ids GitHub gives a file's headings: lower case,
// punctuation but '-' and '_' dropped, spaces as '-', repeats numbered.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		m := heading.FindStringSubmatch(line)
		if inCode || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		id := b.String()
		if n := seen[id]; n > 0 {
			out[id+"-"+strconv.Itoa(n)] = true
		} else {
			out[id] = true
		}
		seen[id]++
	}
	return out
}

func TestLinksResolve(t *testing.T) {
	r := root(t)
	for _, doc := range docs(t) {
		text := read(t, filepath.Join(r, doc))
		dir := filepath.Dir(filepath.Join(r, doc))
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			file := filepath.Join(dir, path)
			if path == "" {
				file = filepath.Join(r, doc)
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s links to %s, which does not exist", doc, target)
				continue
			}
			if frag != "" && strings.HasSuffix(file, ".md") && !anchors(read(t, file))[frag] {
				t.Errorf("%s links to %s: %s has no heading with the id %q", doc, target, filepath.Base(file), frag)
			}
		}
		for _, name := range docMention.FindAllString(text, -1) {
			if _, err := os.Stat(filepath.Join(r, name)); err != nil {
				t.Errorf("%s mentions %s, which does not exist", doc, name)
			}
		}
	}
}

func TestAnchors(t *testing.T) {
	got := anchors("# `POST /v1/explore`\n## Budgets, `next` and long lines\n```\n# not a heading\n```\n## A project's dependencies\n## Errors\n### Errors\n")
	for _, want := range []string{"post-v1explore", "budgets-next-and-long-lines", "a-projects-dependencies", "errors", "errors-1"} {
		if !got[want] {
			t.Errorf("anchors: no %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("anchors: a comment in a code block was taken for a heading")
	}
}
