package config

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// HelpRequest is what a help flag among a command's arguments asks for.
type HelpRequest struct {
	// Topic is --help TOPIC's topic (a group's topic or a word of
	// settings' names); "" asks for the short help.
	Topic string
	// All is --help-all: every setting, by group.
	All bool
	// Markdown is --help-markdown: every setting as docs/OPERATIONS.md's
	// tables.
	Markdown bool
}

// ParseHelp finds a help flag in args: -h or --help [TOPIC],
// --help=TOPIC, --help-all or --help-markdown.
func ParseHelp(args []string) (HelpRequest, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "h", "help":
			h := HelpRequest{Topic: v}
			if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				h.Topic = args[i+1]
			}
			return h, true
		case "help-all":
			return HelpRequest{All: true}, true
		case "help-markdown":
			return HelpRequest{Markdown: true}, true
		}
	}
	return HelpRequest{}, false
}

// machineDefaults are defaults that depend on the machine, described
// instead of shown, so the help and docs/OPERATIONS.md read the same
// everywhere.
var machineDefaults = map[string]string{
	"data-dir":           "pkgscope in the user cache directory, e.g. ~/.cache/pkgscope",
	"compress-workers":   "one per core (GOMAXPROCS)",
	"grep-counts-beside": "one fewer than the cores (GOMAXPROCS - 1)",
}

// Topics are the topics of the groups of settings, in order.
func Topics(settings []Setting) []string {
	var out []string
	for _, s := range settings {
		if t := Topic(s.Group); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Select returns the settings a topic asks for: its group's, or else
// those whose name holds the word ("timeout", "mdn"). It returns none
// for a topic that matches nothing.
func Select(settings []Setting, topic string) []Setting {
	topic = strings.ToLower(strings.TrimLeft(topic, "-"))
	var group, named []Setting
	for _, s := range settings {
		if Topic(s.Group) == topic {
			group = append(group, s)
		}
		if strings.Contains(s.Name, topic) {
			named = append(named, s)
		}
	}
	if len(group) > 0 {
		return group
	}
	return named
}

// byGroup splits settings by their group's topic, in the order topics
// first appear.
func byGroup(settings []Setting) [][]Setting {
	var out [][]Setting
	for _, t := range Topics(settings) {
		var in []Setting
		for _, s := range settings {
			if Topic(s.Group) == t {
				in = append(in, s)
			}
		}
		out = append(out, in)
	}
	return out
}

// WriteGroups writes settings by group, in the order groups first appear,
// each under its title and topic.
func WriteGroups(w io.Writer, settings []Setting) {
	for i, in := range byGroup(settings) {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s (--help %s):\n", in[0].Group, Topic(in[0].Group))
		WriteList(w, in)
	}
}

// WriteList writes settings one after another, as the help shows them:
// the flag and its value's form, then what it sets and its default,
// wrapped to 80 columns.
func WriteList(w io.Writer, settings []Setting) {
	for _, s := range settings {
		text := s.Usage
		if d := shownDefault(s); d != "" {
			text += " (default " + d + ")"
		}
		WriteEntry(w, s, text)
	}
}

// WriteEntry writes one setting's flag and its value's form, then text,
// wrapped to 80 columns in a column of its own.
func WriteEntry(w io.Writer, s Setting, text string) {
	head := "--" + s.Name
	if m := metavar(s); m != "" {
		head += " " + m
	}
	WriteColumns(w, head, text)
}

// WriteColumns writes head, indented by two, and text wrapped beside it
// from column 26 to 80; a head too wide for its column has a line of its
// own.
func WriteColumns(w io.Writer, head, text string) {
	const col, width = 26, 80
	head = "  " + head
	lines := Wrap(text, width-col)
	if len(head) < col-1 {
		fmt.Fprintf(w, "%-*s%s\n", col, head, lines[0])
		lines = lines[1:]
	} else {
		fmt.Fprintln(w, head)
	}
	for _, l := range lines {
		fmt.Fprintf(w, "%*s%s\n", col, "", l)
	}
}

// FlagSettings describes flags of fs defined without a Binder (a
// command's own flags, which have no environment variable), in the order
// names gives, all in group.
func FlagSettings(fs *flag.FlagSet, group string, names ...string) []Setting {
	var out []Setting
	for _, n := range names {
		f := fs.Lookup(n)
		if f == nil {
			continue
		}
		mv, usage := flag.UnquoteUsage(f)
		s := Setting{Name: n, Group: group, Usage: usage, Kind: KindString, Default: f.DefValue}
		if strings.Contains(f.Usage, "`") {
			s.Metavar = mv
		}
		if g, ok := f.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case bool:
				s.Kind = KindBool
			case int, int64, uint, uint64:
				s.Kind = KindInt
			case time.Duration:
				s.Kind = KindDuration
			}
		}
		out = append(out, s)
	}
	return out
}

// WriteMarkdown writes settings as a table per group, for
// docs/OPERATIONS.md. cmd is the command whose --help TOPIC shows the
// same group ("" names none).
func WriteMarkdown(w io.Writer, cmd string, settings []Setting) {
	for i, in := range byGroup(settings) {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "### %s\n\n", in[0].Group)
		if cmd != "" {
			fmt.Fprintf(w, "`%s --help %s`\n\n", cmd, Topic(in[0].Group))
		}
		fmt.Fprint(w, "| setting | default | what it sets |\n|---|---|---|\n")
		for _, s := range in {
			d := shownDefault(s)
			if v, hint, ok := strings.Cut(d, " = "); ok {
				d = "`" + v + "` (" + hint + ")"
			} else if d != "" && machineDefaults[s.Name] == "" {
				d = "`" + d + "`"
			}
			fmt.Fprintf(w, "| `%s` | %s | %s |\n", s.Name, mdEscape(d), mdEscape(s.Usage))
		}
	}
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// metavar is the form of a setting's value in the help.
func metavar(s Setting) string {
	if s.Metavar != "" {
		return s.Metavar
	}
	switch s.Kind {
	case KindBool:
		return ""
	case KindInt:
		return "N"
	case KindBytes:
		return "BYTES"
	case KindDuration:
		return "DURATION"
	case KindList:
		return "LIST"
	}
	switch {
	case strings.HasSuffix(s.Name, "-url"):
		return "URL"
	case strings.HasSuffix(s.Name, "-dir"):
		return "DIR"
	case strings.HasSuffix(s.Name, "-file") || s.Name == "config":
		return "FILE"
	case strings.HasSuffix(s.Name, "addr"):
		return "ADDR"
	case strings.HasSuffix(s.Name, "-version"):
		return "VERSION"
	}
	return "TEXT"
}

// shownDefault is a setting's default as the help shows it: "" for an
// empty string or list, false, or a secret; durations without trailing
// zero units (5m, not 5m0s); byte counts with their size in KiB, MiB or
// GiB when they are a whole number of them.
func shownDefault(s Setting) string {
	if strings.Contains(s.Usage, "(default:") {
		return "" // the usage says it
	}
	if d, ok := machineDefaults[s.Name]; ok {
		return d
	}
	if (s.Default == "0" || s.Default == "0s") && strings.Contains(s.Usage, "0") {
		return "" // the usage says what 0 means
	}
	switch s.Kind {
	case KindSecret:
		return ""
	case KindBool:
		if s.Default == "false" {
			return ""
		}
	case KindDuration:
		if d, err := time.ParseDuration(s.Default); err == nil {
			return shortDuration(d)
		}
	case KindBytes:
		if n, err := strconv.ParseInt(s.Default, 10, 64); err == nil {
			return s.Default + sizeHint(n)
		}
	}
	return s.Default
}

func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func sizeHint(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf(" = %d %s", n/u.size, u.name)
		}
	}
	return ""
}

// Wrap cuts text into lines of at most width bytes at spaces (a longer
// word gets a line of its own).
func Wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}
