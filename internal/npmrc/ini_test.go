package npmrc

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// iniGolden holds lines and what npm's ini package (v5, under node) decodes
// them to. Regenerate by running ini.decode on each line; a bare key, a
// true/false/null value, a quoted number and a "key[]" entry are non-string
// values (str false).
var iniGolden = []struct {
	line  string
	kind  lineKind
	key   string
	value string
	str   bool
}{
	{"registry=http://a.example/", lineEntry, "registry", "http://a.example/", true},
	{"  registry = http://a.example/  ", lineEntry, "registry", "http://a.example/", true},
	{"registry=\"http://a.example/\"", lineEntry, "registry", "http://a.example/", true},
	{"registry='http://a.example/'", lineEntry, "registry", "http://a.example/", true},
	{"registry=http://a.example/ ; comment", lineEntry, "registry", "http://a.example/", true},
	{"registry=http://a.example/#frag", lineEntry, "registry", "http://a.example/", true},
	{"registry=http://a.example/\\#frag", lineEntry, "registry", "http://a.example/#frag", true},
	{"registry=http://a.example/\\;x", lineEntry, "registry", "http://a.example/;x", true},
	{"registry=a\\b", lineEntry, "registry", "a\\b", true},
	{"registry=a\\\\b", lineEntry, "registry", "a\\b", true},
	{"registry=trailing\\", lineEntry, "registry", "trailing\\", true},
	{"; registry=x", lineSkip, "", "", false},
	{"   # registry=x", lineSkip, "", "", false},
	{"\u00a0# registry=x", lineSkip, "", "", false},
	{"flag", lineEntry, "flag", "", false},
	{"k==v", lineEntry, "k", "=v", true},
	{"k=v=w", lineEntry, "k", "v=w", true},
	{"=v", lineSkip, "", "", false},
	{"\"quoted key\"=v", lineEntry, "quoted key", "v", true},
	{"//h/:_authToken=${TOKEN}", lineEntry, "//h/:_authToken", "${TOKEN}", true},
	{"@scope:registry=http://s.example/", lineEntry, "@scope:registry", "http://s.example/", true},
	{"k='\"x\"'", lineEntry, "k", "x", true},
	{"k='123'", lineEntry, "k", "", false},
	{"k=\"unterminated", lineEntry, "k", "\"unterminated", true},
	{"k='", lineEntry, "k", "", true},
	{"k=\"", lineEntry, "k", "\"", true},
	{"k=\"\"", lineEntry, "k", "", true},
	{"k=true", lineEntry, "k", "", false},
	{"k=false", lineEntry, "k", "", false},
	{"k=null", lineEntry, "k", "", false},
	{"k=\"true\"", lineEntry, "k", "", false},
	{"k=\"a;b\"", lineEntry, "k", "a;b", true},
	{"k=\"a\\u0041b\"", lineEntry, "k", "aAb", true},
	{"k = a ; b", lineEntry, "k", "a", true},
	{"k;c=v", lineEntry, "k", "v", true},
	{"k[]=v", lineEntry, "k", "", false},
	{"[]=v", lineEntry, "[]", "v", true},
	{"k=\t v \t", lineEntry, "k", "v", true},
	{"k=\u3000v\ufeff", lineEntry, "k", "v", true},
	{"k=v\u0085", lineEntry, "k", "v\u0085", true},
	{"k=a\u2028b", lineSkip, "", "", false},
	{"  k  ", lineEntry, "k", "", false},
	{"[section]", lineSection, "", "", false},
	{"[section]  ", lineSection, "", "", false},
	{"[section] x", lineEntry, "[section] x", "", false},
	{"[]", lineSection, "", "", false},
	{"\"123\"=v", lineEntry, "123", "v", true},
	{"'k'=v", lineEntry, "k", "v", true},
	{"k=\\\\;x", lineEntry, "k", "\\", true},
	{"k=a\\nb", lineEntry, "k", "a\\nb", true},
	{"k = \"quoted\" ; then a comment keeps the quotes", lineEntry, "k", "\"quoted\"", true},
}

func TestParseLineMatchesNPMIni(t *testing.T) {
	for _, tc := range iniGolden {
		e, kind := parseLine(tc.line)
		if kind != tc.kind || e.key != tc.key || e.value != tc.value || e.str != tc.str {
			t.Errorf("parseLine(%q) = {%q %q str=%v} kind %d, npm's ini gives {%q %q str=%v} kind %d",
				tc.line, e.key, e.value, e.str, kind, tc.key, tc.value, tc.str, tc.kind)
		}
	}
}

func TestParseINIStopsAtSection(t *testing.T) {
	got := parseINI("a=1\r\n; c\n\n[sec]\nregistry=http://in-section.invalid/\n")
	if len(got) != 1 || got[0].key != "a" || got[0].value != "1" {
		t.Fatalf("parseINI = %+v, want only a=1", got)
	}
}

// FuzzParseLine checks that no line panics the parser, that the parser is
// a function of its input, and that values written the way ini.encode
// writes them (its safe()) read back unchanged.
func FuzzParseLine(f *testing.F) {
	for _, tc := range iniGolden {
		f.Add(tc.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		e1, k1 := parseLine(line)
		e2, k2 := parseLine(line)
		if e1 != e2 || k1 != k2 {
			t.Fatalf("parseLine(%q) not deterministic", line)
		}
		if k1 == lineEntry && !e1.str && e1.value != "" {
			t.Fatalf("parseLine(%q): non-string value %q", line, e1.value)
		}
		for _, l := range lineSplit.Split(line, -1) {
			parseLine(l)
		}
		// Round trip through ini's encoding of a value, for values it can
		// represent: ini's safe() does not escape backslashes, writes a lone
		// quote bare (which reads back as ""), and true/false/null read
		// back as non-strings.
		v := trimJS(line)
		if !utf8.ValidString(v) || strings.ContainsAny(v, "\\\r\n\u2028\u2029") ||
			v == `"` || v == "'" || v == "true" || v == "false" || v == "null" {
			return
		}
		enc := "k=" + iniSafe(v)
		got, kind := parseLine(enc)
		if kind != lineEntry || got.key != "k" || got.value != v || !got.str {
			t.Fatalf("value %q encoded as %q reads back as %+v (kind %d)", v, enc, got, kind)
		}
	})
}

// iniSafe is ini's safe() for strings: JSON-quote what would otherwise be
// misread, escape comment characters in the rest.
func iniSafe(v string) string {
	if strings.ContainsAny(v, "=\r\n") || strings.HasPrefix(v, "[") ||
		(len(v) > 1 && isQuoted(v)) || v != trimJS(v) {
		return jsonQuote(v)
	}
	return strings.NewReplacer(";", `\;`, "#", `\#`).Replace(v)
}

func jsonQuote(v string) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // a valid UTF-8 string always marshals
	}
	return string(b)
}
