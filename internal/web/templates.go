package web

import (
	"fmt"
	"html/template"
	"io/fs"
	"strings"

	"github.com/pkgscope/pkgscope/internal/english"
	"github.com/pkgscope/pkgscope/internal/version"
)

// funcs are the templates' helpers; count is english.Count ("1 file",
// "2 files"), the one plural the API, MCP and these pages share, and
// bytes english.Bytes (decimal KB and MB, as answers and the diff's sizes
// print them: one unit convention on every page).
var funcs = template.FuncMap{"bytes": sizeOf, "add": func(a, b int) int { return a + b }, "count": english.Count, "build": func() string { return build },
	"docMarkdown": func(s string) template.HTML { return renderMarkdown([]byte(s), docLink) }}

// build is the footer's "pkgscope v0.1.0 (3f2c9ab)": which build answers.
var build = version.Name + " " + version.Get().Short()

// sizeOf is english.Bytes of an int or int64 (a line's cut bytes are an
// int, a file's size an int64).
func sizeOf(n any) string {
	switch n := n.(type) {
	case int:
		return english.Bytes(int64(n))
	case int64:
		return english.Bytes(n)
	}
	return fmt.Sprint(n)
}

// parseTemplates parses each page with the layout and shared parts. A
// template that does not parse is a programming error, found by every
// test that builds Pages.
func parseTemplates() map[string]*template.Template {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" || name == "parts" {
			continue
		}
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS,
			"templates/layout.html", "templates/parts.html", n))
	}
	return out
}
