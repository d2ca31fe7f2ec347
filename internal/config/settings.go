package config

import (
	"flag"
	"strings"
	"sync"
)

// Kind is the type of a setting's value, as flags, environment variables
// and the config file write it.
type Kind string

// The kinds of settings.
const (
	KindString   Kind = "string"
	KindSecret   Kind = "secret" // a string never printed (a URL with a password)
	KindList     Kind = "list"   // comma-separated; a YAML list in the config file
	KindInt      Kind = "int"
	KindBytes    Kind = "bytes"    // an integer count of bytes
	KindDuration Kind = "duration" // Go syntax: 300ms, 30s, 5m, 1h
	KindBool     Kind = "bool"
)

// Setting is one flag as the help, the config file and
// docs/OPERATIONS.md describe it.
type Setting struct {
	// Name is the flag's name and the config file's key.
	Name string
	// Env is its environment variable.
	Env string
	// Group is the title of the group it was registered in (Binder.Group).
	Group string
	// Usage says what it sets, without the environment variable.
	Usage string
	Kind  Kind
	// Metavar names its value in the help ("DIR"); empty: one from its
	// kind and name.
	Metavar string
	// Default is the value before any file, variable or flag, as a flag
	// would be written; "" for none (and always for a secret).
	Default string
}

// Group starts a group of settings: every flag bound after it, until the
// next Group, belongs to it. The help lists settings by group, in the
// order groups first appear; the title's first word, lower-cased, is the
// group's topic for --help TOPIC ("Store", "Grep and search indexes").
// A group may be entered again, so a flag sits beside its neighbours in
// the code and still in its topic's group.
func (b *Binder) Group(title string) { b.group = title }

// Settings are the flags bound so far, in the order they were bound.
func (b *Binder) Settings() []Setting { return b.settings }

// Topic is a group title's topic: its first word, lower-cased, without
// punctuation ("Redis, cache and rate limits" is "redis").
func Topic(group string) string {
	w, _, _ := strings.Cut(strings.TrimSpace(group), " ")
	return strings.ToLower(strings.TrimRight(w, ",:;."))
}

// Settings are the mirror's settings with their built-in defaults: what
// --help, --help-all and docs/OPERATIONS.md list. No file or environment
// variable is read.
func Settings() []Setting {
	_, b, _ := bindAll("pkgscope", func(string) string { return "" }, nil)
	return b.Settings()
}

// TakesValue reports whether flag name of the mirror's settings takes a
// value after it: every one but the booleans (--jsdelivr-fallback). A
// command that passes its unknown flags on to Load (pkgscope mcp, the
// indexer) splits its arguments with it, so that "--jsdelivr-fallback
// react@19" does not take react@19 for the flag's value.
func TakesValue(name string) bool { return !boolSettings()[name] }

var boolSettings = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, s := range Settings() {
		if s.Kind == KindBool {
			m[s.Name] = true
		}
	}
	return m
})

// IsBoolFlag reports whether f is a boolean flag, which takes no value.
func IsBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
