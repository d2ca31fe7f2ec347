package lockfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pkgscope/pkgscope/internal/english"
)

// This file parses yarn classic's lockfile syntax, following yarn's own
// parser (src/lockfile/parse.js in yarnpkg/yarn 1.22): lines of
// `key value` or `key1, key2:` opening a block indented two spaces deeper;
// keys and values are bare words or JSON strings; "#" starts a comment.
// No maintained Go parser of it exists (the ones published are a few
// years unmaintained), so it is written here, small and fuzzed.
//
// It is more lenient than yarn in one way only: a bare word may start
// with any byte that is not syntax (yarn wants a letter, "/", "." or
// "-", and reads a leading digit or "true" as a number or boolean), since
// every value is used here as a string.

type yarnTokKind int

const (
	yarnEOF yarnTokKind = iota
	yarnNewline
	yarnIndent
	yarnString
	yarnColon
	yarnComma
	yarnComment
)

type yarnTok struct {
	kind   yarnTokKind
	value  string
	indent int
	line   int
}

// yarnField is one key (or several sharing a value) of a block, with a
// string value or a nested block.
type yarnField struct {
	keys  []string
	value string
	block []yarnField // non-nil when the value is a block
	line  int
}

type yarnParser struct {
	data       []byte
	pos        int
	line       int
	lastNL     bool // the previous token ended a line, so spaces indent
	tok        yarnTok
	maxNesting int
	// nodes counts the keys and values parsed so far, against maxNodes:
	// the fields are kept until the whole file is read.
	nodes, maxNodes int
}

// parseYarnV1Syntax parses the whole file into its top-level fields.
func parseYarnV1Syntax(data []byte, lim Limits) ([]yarnField, error) {
	if bytes.Contains(data, []byte("\n<<<<<<<")) || bytes.HasPrefix(data, []byte("<<<<<<<")) {
		return nil, fmt.Errorf("%w: git merge conflict markers (run yarn install to resolve them)", ErrInvalid)
	}
	p := &yarnParser{data: data, line: 1, lastNL: true, maxNesting: lim.MaxNesting, maxNodes: lim.MaxNodes}
	if err := p.next(); err != nil {
		return nil, err
	}
	fields, err := p.block(0)
	if err != nil {
		return nil, err
	}
	if p.tok.kind != yarnEOF {
		return nil, p.unexpected("indentation")
	}
	return fields, nil
}

func (p *yarnParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrInvalid, p.tok.line, fmt.Sprintf(format, args...))
}

func (p *yarnParser) unexpected(what string) error {
	return p.errorf("unexpected %s", what)
}

// next reads the next token into p.tok.
func (p *yarnParser) next() error {
	for {
		if p.pos >= len(p.data) {
			p.tok = yarnTok{kind: yarnEOF, line: p.line}
			return nil
		}
		c := p.data[p.pos]
		wasNL := p.lastNL
		p.lastNL = false
		switch {
		case c == '\n' || c == '\r':
			p.pos++
			if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
				p.pos++
			}
			p.tok = yarnTok{kind: yarnNewline, line: p.line}
			p.line++
			p.lastNL = true
			return nil
		case c == '#':
			end := bytes.IndexByte(p.data[p.pos:], '\n')
			if end < 0 {
				end = len(p.data) - p.pos
			}
			p.tok = yarnTok{kind: yarnComment, value: string(p.data[p.pos+1 : p.pos+end]), line: p.line}
			p.pos += end
			return nil
		case c == ' ':
			n := 0
			for p.pos < len(p.data) && p.data[p.pos] == ' ' {
				p.pos++
				n++
			}
			if !wasNL {
				continue
			}
			if n%2 != 0 {
				p.tok.line = p.line
				return p.errorf("indentation of %s (yarn indents by 2)", english.Count(n, "space"))
			}
			p.tok = yarnTok{kind: yarnIndent, indent: n / 2, line: p.line}
			return nil
		case c == '"':
			return p.quoted()
		case c == ':':
			p.pos++
			p.tok = yarnTok{kind: yarnColon, line: p.line}
			return nil
		case c == ',':
			p.pos++
			p.tok = yarnTok{kind: yarnComma, line: p.line}
			return nil
		case c == '\t' || c < ' ' || c == 0x7f:
			p.tok.line = p.line
			return p.errorf("control character %q", c)
		default:
			start := p.pos
			for p.pos < len(p.data) {
				b := p.data[p.pos]
				if b == ':' || b == ' ' || b == '\n' || b == '\r' || b == ',' {
					break
				}
				p.pos++
			}
			p.tok = yarnTok{kind: yarnString, value: string(p.data[start:p.pos]), line: p.line}
			return nil
		}
	}
}

// quoted reads a JSON string; like yarn, the closing quote is the first
// one not preceded by a lone backslash.
func (p *yarnParser) quoted() error {
	start := p.pos
	i := p.pos + 1
	for ; i < len(p.data); i++ {
		b := p.data[i]
		if b == '\n' {
			break
		}
		if b == '"' && !(p.data[i-1] == '\\' && (i-2 < start || p.data[i-2] != '\\')) {
			i++
			var s string
			if err := json.Unmarshal(p.data[start:i], &s); err != nil {
				p.tok.line = p.line
				return p.errorf("bad string %s", truncate(string(p.data[start:i])))
			}
			p.pos = i
			p.tok = yarnTok{kind: yarnString, value: s, line: p.line}
			return nil
		}
	}
	p.tok.line = p.line
	return p.errorf("unterminated string")
}

// block parses the fields of a block at indent, as yarn's parse(indent):
// a block ends at a line indented less (or more, which is an error for
// the caller to find).
func (p *yarnParser) block(indent int) ([]yarnField, error) {
	if indent > p.maxNesting {
		return nil, p.errorf("blocks nest deeper than the limit MaxNesting = %d", p.maxNesting)
	}
	fields := []yarnField{}
	for {
		switch t := p.tok; t.kind {
		case yarnEOF:
			return fields, nil
		case yarnComment:
			if err := p.next(); err != nil {
				return nil, err
			}
		case yarnNewline:
			if err := p.next(); err != nil {
				return nil, err
			}
			if indent == 0 {
				continue // at the top, what follows a newline is a key or more blank lines
			}
			if p.tok.kind != yarnIndent {
				return fields, nil // back to column 0
			}
			if p.tok.indent != indent {
				return fields, nil
			}
			if err := p.next(); err != nil {
				return nil, err
			}
		case yarnIndent:
			if t.indent != indent {
				return fields, nil
			}
			if err := p.next(); err != nil {
				return nil, err
			}
		case yarnString:
			f, err := p.field(indent)
			if err != nil {
				return nil, err
			}
			fields = append(fields, f)
			if f.block != nil && indent > 0 && p.tok.kind != yarnIndent {
				return fields, nil
			}
		default:
			return nil, p.unexpected(tokName(t.kind))
		}
	}
}

// field parses `key[, key...] value` or `key[, key...]:` and its block.
func (p *yarnParser) field(indent int) (yarnField, error) {
	f := yarnField{keys: []string{p.tok.value}, line: p.tok.line}
	if err := p.count(); err != nil {
		return f, err
	}
	if err := p.next(); err != nil {
		return f, err
	}
	for p.tok.kind == yarnComma {
		if err := p.count(); err != nil {
			return f, err
		}
		if err := p.next(); err != nil {
			return f, err
		}
		if p.tok.kind != yarnString {
			return f, p.unexpected(tokName(p.tok.kind) + " after a comma (want a key)")
		}
		f.keys = append(f.keys, p.tok.value)
		if err := p.next(); err != nil {
			return f, err
		}
	}
	colon := p.tok.kind == yarnColon
	if colon {
		if err := p.next(); err != nil {
			return f, err
		}
	}
	switch {
	case p.tok.kind == yarnString:
		f.value = p.tok.value
		return f, p.next()
	case colon:
		block, err := p.block(indent + 1)
		if err != nil {
			return f, err
		}
		f.block = block
		return f, nil
	}
	return f, p.unexpected(tokName(p.tok.kind) + " after key " + truncate(f.keys[0]) + " (want a value or a colon)")
}

// count counts a key and its value (or the key of a key list) as two
// nodes against maxNodes.
func (p *yarnParser) count() error {
	p.nodes += 2
	if p.nodes > p.maxNodes {
		return fmt.Errorf("line %d: more than %d keys and values, over the limit MaxNodes (setting lockfile-max-nodes): %w", p.tok.line, p.maxNodes, ErrTooLarge)
	}
	return nil
}

func tokName(k yarnTokKind) string {
	switch k {
	case yarnEOF:
		return "end of file"
	case yarnNewline:
		return "end of line"
	case yarnIndent:
		return "indentation"
	case yarnString:
		return "string"
	case yarnColon:
		return "colon"
	case yarnComma:
		return "comma"
	case yarnComment:
		return "comment"
	}
	return "token"
}

// maxQuoted bounds how much of the input an error message repeats.
const maxQuoted = 64

func truncate(s string) string {
	if len(s) > maxQuoted {
		s = s[:maxQuoted] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// yarnGet returns the string value of key in a block.
func yarnGet(block []yarnField, key string) string {
	for _, f := range block {
		if f.block == nil && slices.Contains(f.keys, key) {
			return f.value
		}
	}
	return ""
}

// yarnMap returns the block under key as name → value.
func yarnMap(block []yarnField, key string) map[string]string {
	for _, f := range block {
		if f.block != nil && slices.Contains(f.keys, key) {
			m := map[string]string{}
			for _, g := range f.block {
				if g.block == nil {
					for _, k := range g.keys {
						m[k] = g.value
					}
				}
			}
			return m
		}
	}
	return nil
}

// trimKey is for error messages about entries.
func trimKey(keys []string) string { return truncate(strings.Join(keys, ", ")) }
