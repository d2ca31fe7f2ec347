package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/pkgscope/pkgscope/internal/closest"
)

// MaxFileBytes caps a config file: the commented example of every setting
// is about 20 KB.
const MaxFileBytes = 1 << 20

// File is a YAML config file: a mapping whose keys are flag names
// ("max-files: 20000"). Its values come after the defaults and before the
// environment and flags (Load). A key with no value (null) leaves the
// setting as it was.
type File struct {
	path   string
	prefix string // "indexer." in a section, for its keys in errors
	values map[string]*yaml.Node
	keys   []*yaml.Node // in file order, for the unknown-key error
}

// ReadFile reads and parses the config file at path.
func ReadFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("config file %s: larger than %d bytes", path, MaxFileBytes)
	}
	return ParseFile(path, data)
}

// ParseFile parses a config file's content; path names it in errors.
func ParseFile(path string, data []byte) (*File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("config file %s: %v", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return &File{path: path}, nil // empty, or only comments
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("config file %s: line %d: want a mapping of settings (addr: 127.0.0.1:7878), got %s", path, m.Line, nodeKind(m))
	}
	return fromMapping(path, m)
}

// fromMapping is the File of mapping m's keys and values.
func fromMapping(path string, m *yaml.Node) (*File, error) {
	f := &File{path: path, values: map[string]*yaml.Node{}}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("config file %s: line %d: a key must be a setting's name, got %s", path, k.Line, nodeKind(k))
		}
		if _, dup := f.values[k.Value]; dup {
			return nil, fmt.Errorf("config file %s: line %d: %s is set twice", path, k.Line, k.Value)
		}
		if k.Value == "config" {
			return nil, fmt.Errorf("config file %s: line %d: config names the file itself; give it with --config or $PKGSCOPE_CONFIG", path, k.Line)
		}
		f.values[k.Value] = v
		f.keys = append(f.keys, k)
	}
	return f, nil
}

// IndexerSection is the key of the config file's mapping of the
// indexer's own settings (workers, job-timeout, ...): the mirror's
// settings sit at the top, and pkgscope-indexer reads both.
const IndexerSection = "indexer"

// Section is the mapping under key as a File of its own (nil when the
// file has none), for settings bound by another Binder.
func (f *File) Section(key string) (*File, error) {
	if f == nil {
		return nil, nil
	}
	n, ok := f.values[key]
	if !ok || n.Tag == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("config file %s: line %d: %s: want a mapping of its settings, got %s", f.path, n.Line, key, nodeKind(n))
	}
	sec, err := fromMapping(f.path, n)
	if err != nil {
		return nil, err
	}
	sec.prefix = key + "."
	return sec, nil
}

// Open reads the config file args or the environment name (--config
// FILE, else $PKGSCOPE_CONFIG); nil when neither names one.
func Open(args []string, getenv func(string) string) (*File, error) {
	path := configPath(args, getenv)
	if path == "" {
		return nil, nil
	}
	return ReadFile(path)
}

// UseFile makes b apply f's values, before the environment's, to the
// flags bound after it.
func (b *Binder) UseFile(f *File) { b.file = f }

// Unknown is an error naming each key of f that is none of known, with
// the closest one's name.
func (f *File) Unknown(known []Setting) error { return f.unknown(known) }

// value is key's value as a flag would take it, and whether the file
// sets it. A list may be a YAML sequence or a comma-separated string.
func (f *File) value(key string, k Kind) (string, bool, error) {
	if f == nil {
		return "", false, nil
	}
	n, ok := f.values[key]
	if !ok || n.Tag == "!!null" {
		return "", false, nil
	}
	switch {
	case n.Kind == yaml.ScalarNode:
		return n.Value, true, nil
	case n.Kind == yaml.SequenceNode && k == KindList:
		var items []string
		for _, it := range n.Content {
			if it.Kind != yaml.ScalarNode || strings.Contains(it.Value, ",") {
				return "", false, fmt.Errorf("config file %s: line %d: %s: want a list of %s", f.path, it.Line, f.prefix+key, "single values without commas")
			}
			items = append(items, it.Value)
		}
		return strings.Join(items, ","), true, nil
	}
	return "", false, fmt.Errorf("config file %s: line %d: %s: want %s, got %s", f.path, n.Line, f.prefix+key, kindForm[k], nodeKind(n))
}

// typeError names key and the form its value must take.
func (f *File) typeError(key string, k Kind, v string) error {
	line := 0
	if n := f.values[key]; n != nil {
		line = n.Line
	}
	if k == KindSecret {
		v = "[redacted]"
	}
	return fmt.Errorf("config file %s: line %d: %s: want %s, got %q", f.path, line, f.prefix+key, kindForm[k], v)
}

// kindForm says how a value of each kind is written.
var kindForm = map[Kind]string{
	KindString:   "a string",
	KindSecret:   "a string",
	KindList:     "a list (or a comma-separated string)",
	KindInt:      "a whole number",
	KindBytes:    "a whole number of bytes (67108864 for 64 MiB)",
	KindDuration: "a duration such as 500ms, 30s, 5m or 1h",
	KindBool:     "true or false",
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	return fmt.Sprintf("%q", n.Value)
}

// unknown is an error naming each key of f that is no setting, with the
// closest setting's name.
func (f *File) unknown(known []Setting) error {
	if f == nil {
		return nil
	}
	names := make([]string, 0, len(known))
	is := map[string]bool{}
	for _, s := range known {
		names = append(names, s.Name)
		is[s.Name] = true
	}
	var errs []error
	for _, k := range f.keys {
		if is[k.Value] || (f.prefix == "" && k.Value == IndexerSection) {
			continue
		}
		msg := fmt.Sprintf("config file %s: line %d: unknown setting %q", f.path, k.Line, f.prefix+k.Value)
		if hint, ok := keyHints[k.Value]; ok && f.prefix == "" {
			msg += "; " + hint
		} else if near := closest.Strings(k.Value, names, 1); len(near) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", near[0])
		} else {
			msg += " (pkgscope --help-all lists them)"
		}
		errs = append(errs, errors.New(msg))
	}
	return errors.Join(errs...)
}

// keyHints answer keys people write that are no setting by design.
var keyHints = map[string]string{
	"tokens":   "name a file of them with tokens-file, or set $PKGSCOPE_TOKENS",
	"registry": "the registry comes from npm's configuration (.npmrc, npm_config_registry); see project-dir",
}

// configPath is the config file args or the environment name: --config
// FILE or --config=FILE, else $PKGSCOPE_CONFIG. It is read before the
// flags are parsed, since the file's values come before theirs.
func configPath(args []string, getenv func(string) string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") {
			break
		}
		name, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "config" {
			if hasValue {
				return v
			}
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		}
		// Another flag's value (a bool flag followed by a word is an
		// error Load reports anyway).
		if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
		}
	}
	return getenv(EnvPrefix + "CONFIG")
}

// flagError adds the closest setting's name to an unknown flag's error.
func flagError(err error, known []Setting) error {
	const undefined = "flag provided but not defined: -"
	msg := err.Error()
	if !strings.HasPrefix(msg, undefined) {
		return err
	}
	name := strings.TrimPrefix(msg, undefined)
	names := make([]string, 0, len(known))
	for _, s := range known {
		names = append(names, s.Name)
	}
	if near := closest.Strings(name, names, 1); len(near) > 0 {
		return fmt.Errorf("unknown flag --%s; did you mean --%s?", name, near[0])
	}
	return fmt.Errorf("unknown flag --%s (pkgscope --help-all lists every setting)", name)
}
