package web

import (
	"fmt"
	"html/template"
	"io/fs"
	"strings"

	"github.com/pkgscope/pkgscope/internal/english"
)

// funcs are the templates' helpers; count is english.Count ("1 file",
// "2 files"), the one plural the API, MCP and these pages share.
var funcs = template.FuncMap{"bytes": humanBytes, "add": func(a, b int) int { return a + b }, "count": english.Count}

// humanBytes prints a size as people read it: 912 B, 4.2 KiB, 31.0 MiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
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
