// Command agent makes the first calls a coding agent makes with default
// parameters against a running mirror — the design's lucide-react flow, a
// grep of a framework's hook, a list of a big package, and the mistakes
// agents make — and prints, per call, the bytes of the JSON answer
// (/v1/explore), of the MCP text the model reads, of its
// structuredContent and of the whole answer on the wire (/mcp, as a
// client connects by default), and whether the fact the agent came for is
// in that first answer (issues 12 and 28), then the bytes of tools/list. bench/agent/run.sh runs it against this
// tree's mirror and an older one, side by side.
//
//	go run ./bench/agent -url http://127.0.0.1:7878 [-label after]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"
)

// call is one agent call and the fact it came for: a regexp the answer
// (the MCP text) must hold on its first page.
type call struct {
	name, args, fact string
}

var calls = []call{
	{"lucide-react: list", `{"action":"list","packageName":"lucide-react","version":"1.81.0"}`, `dist/lucide-react(\.d\.ts|\.\{[^}\n]*\bd\.ts\b)`},
	{"lucide-react: glob *.d.ts", `{"action":"glob","packageName":"lucide-react","version":"1.81.0","patterns":["**/*.d.ts"]}`, `dist/lucide-react\.d\.ts`},
	{"lucide-react: read dist/lucide-react.d.ts", `{"action":"read","packageName":"lucide-react","version":"1.81.0","path":"dist/lucide-react.d.ts"}`, `declare const ArrowLeft\b`},
	{"lucide-react: grep ArrowRight", `{"action":"grep","packageName":"lucide-react","version":"1.81.0","pattern":"ArrowRight"}`, `declare const ArrowRight\b`},
	{"next: grep useRouter", `{"action":"grep","packageName":"next","version":"16.4.6","pattern":"useRouter"}`, `\.d\.ts:\d+:\d+:`},
	{"next: list", `{"action":"list","packageName":"next","version":"16.4.6"}`, `(?m)^dist/`},
	{"next: grep useRouter, contextLines 2", `{"action":"grep","packageName":"next","version":"16.4.6","pattern":"useRouter","contextLines":2}`, `\.d\.ts(-\d+-|\n\d+[-:])`},
	{"next: grep useRouter, include *.d.ts", `{"action":"grep","packageName":"next","version":"16.4.6","pattern":"useRouter","include":["*.d.ts"]}`, `\.d\.ts:\d+:\d+:`},
	{"rxjs: grep switchMap", `{"action":"grep","packageName":"rxjs","version":"7.8.2","pattern":"switchMap"}`, `\.d\.ts:\d+:\d+:`},
	{"mistake: name@version in packageName", `{"action":"list","packageName":"lucide-react@1.81.0"}`, `1\.81\.0`},
	{"mistake: node_modules/ prefix", `{"action":"read","packageName":"lucide-react","version":"1.81.0","path":"node_modules/lucide-react/package.json"}`, `"name": "lucide-react"`},
	{"mistake: wrong path", `{"action":"read","packageName":"lucide-react","version":"1.81.0","path":"dist/index.d.ts"}`, `dist/lucide-react\.d\.ts`},
	{"mistake: misspelt package", `{"action":"list","packageName":"lucide-reactt"}`, `lucide-react\b`},
	{"mistake: regexp syntax", `{"action":"grep","packageName":"lucide-react","version":"1.81.0","pattern":"createLucideIcon("}`, `fixedStrings`},
	{"mistake: read a folder", `{"action":"read","packageName":"lucide-react","version":"1.81.0","path":"dist"}`, `dist/esm/`},
	{"mistake: glob without **/", `{"action":"glob","packageName":"lucide-react","version":"1.81.0","patterns":["*.d.ts"]}`, `\*\*/\*\.d\.ts`},
	{"mistake: version that does not exist", `{"action":"list","packageName":"lucide-react","version":"99"}`, `the highest is \d`},
	{"mistake: scope without @", `{"action":"list","packageName":"types/react","version":"19.2.7"}`, `@types/react@19\.2\.7`},
	{"mistake: a version past its major's last", `{"action":"list","packageName":"react","version":"18.9.0"}`, `the highest 18\.x is 18\.\d+\.\d+`},
	{"mistake: glob a source path", `{"action":"glob","packageName":"next","version":"16.4.6","patterns":["src/**/navigation.ts"]}`, `dist/client/components/navigation\.d\.ts`},
	{"mistake: grep for a name it does not have", `{"action":"grep","packageName":"lucide-react","version":"1.81.0","pattern":"UnicornIcon"}`, `caseInsensitive: true`},
	{"mistake: grep with the wrong case", `{"action":"grep","packageName":"lucide-react","version":"1.81.0","pattern":"createlucideicon"}`, `with caseInsensitive: true it matches in (at least )?\d+ files`},
	// Issue 28's tasks.
	{"date-fns: list locale/", `{"action":"list","packageName":"date-fns","version":"4.1.0","path":"locale"}`, `(?m)^locale/(\{[^}\n]*\b)?af\b`},
	{"typescript: grep checkGrammar\\w+", `{"action":"grep","packageName":"typescript","version":"5.9.3","pattern":"checkGrammar\\w+"}`, `of \d+ in all`},
	{"typescript: grep TS2307's key, files", `{"action":"grep","packageName":"typescript","version":"5.9.3","pattern":"Cannot_find_module_0_or_its_corresponding_type_declarations","outputMode":"files_with_matches"}`, `\A[^\n]*\n(?:\[[^\n]*\]\n)*lib/[^/\n]+\n`},
	{"jquery: read a minified line, maxBytes 20000", `{"action":"read","packageName":"jquery","version":"3.7.1","path":"dist/jquery.min.js","offset":2,"column":1,"maxBytes":20000}`, `bytes 1-1\d{4}\b`},
	{"mistake: misspelt, empty package (lodahs)", `{"action":"list","packageName":"lodahs"}`, `lodash\b`},
	{"mistake: a source path lodash-es does not ship", `{"action":"read","packageName":"lodash-es","version":"4.17.21","path":"src/index.ts"}`, `lodash\.js|index\.js`},
	{"mistake: action search", `{"action":"search","packageName":"lodash-es","version":"4.17.21","pattern":"debounce"}`, `explore_web_docs`},
}

func main() {
	base := flag.String("url", "http://127.0.0.1:7878", "the mirror")
	label := flag.String("label", "", "column label")
	flag.Parse()
	_, tools := post(*base+"/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`), map[string]string{"Accept": "application/json, text/event-stream"})
	fmt.Printf("tools/list (%s): %d bytes on the wire\n\n", *label, len(tools))
	fmt.Printf("| call (%s) | JSON bytes (status) | MCP text bytes | MCP structured bytes | MCP wire bytes | fact on first page | first .d.ts match | ms |\n|---|---:|---:|---:|---:|---|---:|---:|\n", *label)
	var sumText, sumWire int
	for _, c := range calls {
		start := time.Now()
		status, js := post(*base+"/v1/explore", []byte(c.args), nil)
		text, structured, wire := mcpCall(*base, c.args)
		ms := time.Since(start).Milliseconds()
		found := regexp.MustCompile(c.fact).MatchString(text)
		sumText, sumWire = sumText+len(text), sumWire+wire
		fmt.Printf("| %s | %d (%d) | %d | %d | %d | %s | %s | %d |\n", c.name, len(js), status, len(text), len(structured), wire, yes(found), firstDecl(js), ms)
		if n, lines := repeatedPaths(text); n > 0 {
			repeated = append(repeated, fmt.Sprintf("%s: %d of %d MCP text bytes (%d lines) repeat the path of the line before", c.name, n, len(text), lines))
		}
	}
	fmt.Printf("| all %d calls | | %d | | %d (%.2fx the text) | | | |\n", len(calls), sumText, sumWire, float64(sumWire)/float64(max(sumText, 1)))
	fmt.Println()
	for _, r := range repeated {
		fmt.Println("- " + r)
	}
}

var repeated []string

// grepLine is a grep text line: a match (path:line:col:) or a context
// line (path-line-); under ripgrep's --heading form (a context grep's
// answer), no line carries a path and nothing repeats.
var grepLine = regexp.MustCompile(`^(.+?)(?::\d+:\d+:|-\d+-)`)

// repeatedPaths counts the bytes of grep text lines that start with the
// same path as the line before ("--" between them too): what ripgrep's
// --heading form would save, less one heading line per file, which is
// not subtracted.
func repeatedPaths(text string) (bytes, lines int) {
	last := ""
	for _, l := range strings.Split(text, "\n") {
		if l == "--" {
			continue
		}
		m := grepLine.FindStringSubmatch(l)
		if m == nil {
			last = ""
			continue
		}
		if m[1] == last {
			bytes += len(m[1])
			lines++
		}
		last = m[1]
	}
	return bytes, lines
}

// firstDecl is the rank of a grep answer's first match in a .d.ts file
// ("-" when none, or not a grep).
func firstDecl(js []byte) string {
	var g struct {
		Matches []struct {
			File string `json:"file"`
		} `json:"matches"`
	}
	if json.Unmarshal(js, &g) != nil || len(g.Matches) == 0 {
		return "-"
	}
	for i, m := range g.Matches {
		if strings.HasSuffix(m.File, ".d.ts") {
			return fmt.Sprintf("%d of %d", i+1, len(g.Matches))
		}
	}
	return fmt.Sprintf("none of %d", len(g.Matches))
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

func post(url string, body []byte, hdr map[string]string) (int, []byte) {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Minute}).Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// mcpCall calls explore_npm on the mirror's stateless /mcp, as a client
// connects by default, and returns the text the model reads, the
// structuredContent, as bytes, and the bytes of the whole answer on the
// wire.
func mcpCall(base, args string) (string, []byte, int) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"explore_npm","arguments":` + args + `}}`
	_, b := post(base+"/mcp", []byte(body), map[string]string{"Accept": "application/json, text/event-stream"})
	wire := len(b)
	// The answer may come as one SSE event.
	if i := bytes.Index(b, []byte("data: ")); i >= 0 {
		b = b[i+6:]
	}
	var r struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Structured json.RawMessage `json:"structuredContent"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &r); err != nil || r.Error != nil {
		return fmt.Sprintf("mcp error: %v %v %.200s", err, r.Error, b), nil, wire
	}
	var text []string
	for _, c := range r.Result.Content {
		text = append(text, c.Text)
	}
	return strings.Join(text, "\n"), r.Result.Structured, wire
}
