package web

import (
	"bytes"
	"html"
	"html/template"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

// styleName and darkStyleName are the chroma styles the page's CSS is
// generated from: the dark one applies under prefers-color-scheme: dark.
const styleName, darkStyleName = "github", "github-dark"

// maxHighlightBytes bounds the text given to the highlighter on one page:
// chroma's regexp lexers cost about 10 ms per 100 KiB of JavaScript here;
// a page over this is shown plain (the page budget is 100 KiB, so this
// only triggers with a raised budget).
const maxHighlightBytes = 256 << 10

// litBytes bounds the highlighted pages Pages keeps, counted as their
// HTML: a page of the default 100 KiB of text is about 300 KiB of it, so
// this keeps the last 50 or more pages people looked at.
const litBytes = 16 << 20

// litKey names a highlighted page: the body's hash, the file name's
// extension (which picks the lexer), the first line and the width lines
// were cut at.
type litKey struct {
	hash         [32]byte
	ext          string
	start, width int
}

// litPage is a highlighted page, with what the page says of the file.
type litPage struct {
	lines []fileLine
	lexed bool
	total int    // the file's lines
	cutBy string // what cut the page short, "" at the file's end
}

// cost is what the page holds: its HTML and each line's header.
func (p litPage) cost() int64 {
	n := int64(0)
	for _, l := range p.lines {
		n += int64(len(l.HTML)) + 48
	}
	return n
}

// highlight renders lines (numbered from start, already cut by pageOf) as
// HTML with chroma's lexer for path's file type. It reports whether a
// lexer was used; plain text is escaped and never interpreted.
func highlight(path string, lines []pageLine, start int) ([]fileLine, bool) {
	out := make([]fileLine, len(lines))
	shown := make([]string, len(lines))
	size := 0
	for i, l := range lines {
		out[i].N, out[i].Cut = start+i, l.Cut
		shown[i] = l.Text
		size += len(l.Text) + 1
	}
	lexer := lexers.Match(path)
	if lexer == nil && strings.HasSuffix(path, ".d.ts") {
		lexer = lexers.Get("typescript")
	}
	if lexer == nil || size > maxHighlightBytes {
		for i, l := range shown {
			out[i].HTML = template.HTML(html.EscapeString(l))
		}
		return out, false
	}
	it, err := chroma.Coalesce(lexer).Tokenise(nil, strings.Join(shown, "\n")+"\n")
	if err != nil {
		for i, l := range shown {
			out[i].HTML = template.HTML(html.EscapeString(l))
		}
		return out, false
	}
	var b strings.Builder
	for i, toks := range chroma.SplitTokensIntoLines(it.Tokens()) {
		if i >= len(out) {
			break
		}
		b.Reset()
		for _, t := range toks {
			v := strings.TrimSuffix(t.Value, "\n")
			if v == "" {
				continue
			}
			// Error tokens are the lexer's own gaps (TypeScript generics
			// it does not know), not the file's: shown plain.
			if cls := chroma.StandardTypes[t.Type]; cls != "" && t.Type != chroma.Error {
				b.WriteString(`<span class="`)
				b.WriteString(cls)
				b.WriteString(`">`)
				b.WriteString(html.EscapeString(v))
				b.WriteString(`</span>`)
			} else {
				b.WriteString(html.EscapeString(v))
			}
		}
		out[i].HTML = template.HTML(b.String())
	}
	return out, true
}

var (
	cssOnce sync.Once
	cssText []byte
)

// highlightCSS is the stylesheet for highlight's classes.
func highlightCSS() []byte {
	cssOnce.Do(func() {
		// Each style under its own media query: a token class the dark
		// style leaves out then takes the page's text colour, not the
		// light style's (dark grey on the dark background).
		var b bytes.Buffer
		f := chromahtml.New(chromahtml.WithClasses(true))
		for _, s := range []struct{ scheme, style string }{{"light", styleName}, {"dark", darkStyleName}} {
			b.WriteString("@media (prefers-color-scheme: " + s.scheme + ") {\n")
			if err := f.WriteCSS(&b, styles.Get(s.style)); err != nil {
				panic("web: chroma CSS: " + err.Error()) // a programming error: the style is built in
			}
			b.WriteString("}\n")
		}
		cssText = b.Bytes()
	})
	return cssText
}
