package explore

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestEveryFieldHasAnAction guards the table against drift: a field
// added to Request that no action takes would be refused everywhere.
func TestEveryFieldHasAnAction(t *testing.T) {
	for _, f := range requestFields {
		if len(takers(f)) == 0 {
			t.Errorf("Request field %q is taken by no action: add it to actionFields (fields.go)", f)
		}
	}
}

// TestFieldsEachActionTakes sends every action each field it reads, as
// the actions' code reads them: none may be refused.
func TestFieldsEachActionTakes(t *testing.T) {
	two := 2
	shared := `"packageName":"p","version":"1","maxBytes":9,"cursor":"c","project":"x"`
	cases := map[string]string{
		"list": `{"action":"list",` + shared + `,"path":"dist","depth":1}`,
		"glob": `{"action":"glob",` + shared + `,"patterns":["*"]}`,
		"read": `{"action":"read",` + shared + `,"path":"a.js","offset":2,"limit":3,"column":4}`,
		"grep": `{"action":"grep",` + shared + `,"pattern":"x","outputMode":"count","sort":"path","caseInsensitive":true,` +
			`"fixedStrings":true,"wholeWord":true,"include":"*.js","exclude":["*.map"],"contextLines":2,"maxMatches":5,"maxMatchesPerFile":1}`,
		"diff": `{"action":"diff","packageName":"p","maxBytes":9,"cursor":"c","from":"1","to":"2","include":"lib","exclude":"*.map",` +
			`"contextLines":0,"nameOnly":true,"ignoreAllSpace":true,"noPrefix":true,"srcPrefix":"x/","dstPrefix":"y/","text":true}`,
		"project list": `{"action":"list","project":"x","path":"node_modules/a","depth":1,"maxBytes":9,"cursor":"c"}`,
		"project glob": `{"action":"glob","project":"x","patterns":"node_modules/**","maxBytes":9,"cursor":"c"}`,
		"project read": `{"action":"read","project":"x","path":"node_modules/a/b.js","offset":2,"limit":3,"column":4,"maxBytes":9}`,
		"project grep": `{"action":"grep","project":"x","pattern":"x","outputMode":"count","caseInsensitive":true,"fixedStrings":true,` +
			`"wholeWord":true,"include":"*.js","exclude":"*.map","contextLines":2,"maxMatches":5,"maxMatchesPerFile":1,"maxBytes":9,"cursor":"c"}`,
	}
	for name, body := range cases {
		var r Request
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		if err := checkFields(r); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// contextLines: 0 is given (a pointer), and diff takes it.
	if err := checkFields(Request{Action: "read", Path: "a", ContextLines: &two}); err == nil {
		t.Error("read with contextLines was taken")
	}
}

// TestFieldNotTaken: a field the action does not read is a 400 naming
// the field to use, with the request's own value moved into it.
func TestFieldNotTaken(t *testing.T) {
	cases := []struct{ body, field, want string }{
		{`{"action":"grep","packageName":"zod","pattern":"ZodError","limit":2}`, "limit", "grep takes maxMatches, not limit"},
		{`{"action":"grep","packageName":"next","pattern":"x","path":"dist/client/components"}`, "path", "grep has no path: use include:['dist/client/components/**']"},
		{`{"action":"grep","packageName":"next","pattern":"x","path":"dist/index.js"}`, "path", "use include:['dist/index.js']"},
		{`{"action":"glob","packageName":"next","patterns":"*.d.ts","path":"dist/client/components"}`, "path", "glob patterns are relative to the package root: use 'dist/client/components/*.d.ts'"},
		{`{"action":"glob","packageName":"next","patterns":["**/*.js","!**/*.min.js"],"path":"dist/"}`, "path", "use 'dist/**/*.js', '!dist/**/*.min.js'"},
		{`{"action":"read","packageName":"next","path":"a.js","pattern":"useState"}`, "pattern", `use grep with pattern:"useState" and include:["a.js"]`},
		{`{"action":"read","packageName":"next","path":"a.js","maxMatches":5}`, "maxMatches", "read takes limit"},
		{`{"action":"read","packageName":"next","path":"a.js","contextLines":5}`, "contextLines", "give offset"},
		{`{"action":"glob","packageName":"next","pattern":"*.d.ts"}`, "pattern", `glob takes patterns (globs over paths), not pattern: e.g. patterns:["*.d.ts"]`},
		{`{"action":"grep","packageName":"next","patterns":["a","b"]}`, "patterns", "join alternatives with |"},
		{`{"action":"list","packageName":"next","patterns":"*"}`, "patterns", "use action glob"},
		{`{"action":"list","packageName":"next","pattern":"x"}`, "pattern", "grep searches file contents"},
		{`{"action":"glob","packageName":"next","patterns":"*","depth":2}`, "depth", "'**' across folders"},
		{`{"action":"glob","packageName":"next","patterns":"*","include":"*.js"}`, "include", "glob takes patterns, not include"},
		{`{"action":"list","packageName":"next","limit":10}`, "limit", "list has no limit: an answer is cut at maxBytes"},
		{`{"action":"diff","packageName":"next","version":"1.0.0","to":"2.0.0"}`, "version", `diff takes from and to, not version: e.g. from:"1.0.0"`},
		{`{"action":"diff","packageName":"next","from":"1","to":"2","path":"lib"}`, "path", "diff has no path: use include:['lib/**']"},
		{`{"action":"list","packageName":"next","nameOnly":true}`, "nameOnly", "list has no nameOnly (it is diff's); list takes path, depth"},
		{`{"action":"grep","project":"x","pattern":"x","sort":"path"}`, "sort", "grep over a project has no sort"},
		{`{"action":"read","project":"x","path":"node_modules/a/b.js","version":"1"}`, "version", "version needs packageName"},
		// Two fields: both named, the first is the error's field.
		{`{"action":"grep","packageName":"next","pattern":"x","path":"dist","limit":1}`, "path", "use include:['dist/**']; grep takes maxMatches"},
	}
	for _, tc := range cases {
		var r Request
		if err := json.Unmarshal([]byte(tc.body), &r); err != nil {
			t.Fatal(err)
		}
		err := checkFields(r)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != tc.field || !strings.Contains(ie.Err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant field %s, message containing %q", tc.body, err, tc.field, tc.want)
		}
	}
}

// TestUnknownFields: a field that is not Request's names the one meant,
// by the action where that depends on it.
func TestUnknownFields(t *testing.T) {
	cases := []struct {
		names        []string
		action, want string
	}{
		{[]string{"package"}, "list", `unknown field "package": did you mean packageName?`},
		{[]string{"query"}, "grep", "did you mean pattern?"},
		{[]string{"query"}, "glob", "did you mean patterns?"},
		{[]string{"file"}, "read", "did you mean path?"},
		{[]string{"file"}, "grep", "did you mean include?"},
		{[]string{"glob"}, "grep", "did you mean include?"},
		{[]string{"glob"}, "glob", "did you mean patterns?"},
		{[]string{"max"}, "grep", "did you mean maxMatches?"},
		{[]string{"max"}, "read", "did you mean limit?"},
		{[]string{"line"}, "read", "did you mean offset?"},
		{[]string{"output_mode"}, "grep", "did you mean outputMode?"},
		{[]string{"PackageName"}, "list", "did you mean packageName?"},
		{[]string{"line"}, "grep", "did you mean offset? (offset is read's)"},
		{[]string{"patern"}, "grep", `unknown field "patern": did you mean pattern?`},
		{[]string{"maxMatch"}, "grep", `did you mean maxMatches?`},
		{[]string{"contextLine"}, "diff", `did you mean contextLines?`},
		{[]string{"bogus"}, "grep", `unknown field "bogus"; grep takes pattern, outputMode`},
		{[]string{"bogus", "query"}, "", `unknown field "bogus"; unknown field "query": did you mean pattern?; the fields are action, packageName`},
	}
	for _, tc := range cases {
		err := UnknownFields(tc.names, tc.action)
		if err.Field != tc.names[0] || !strings.Contains(err.Err.Error(), tc.want) {
			t.Errorf("%v %s: got %v, want %q", tc.names, tc.action, err, tc.want)
		}
	}
}

// TestRE2Dialect: syntax RE2 reads differently from the engine a model
// had in mind is refused with what to write; the same text escaped, in a
// character class or as RE2 has it passes.
func TestRE2Dialect(t *testing.T) {
	refused := map[string]string{
		`\<Home\>`:     `use \b`,
		`foo\>`:        "wholeWord: true",
		`(?<=use)Memo`: "RE2 has no look-around",
		`foo(?=\()`:    "match the context as part of the pattern",
		`(?!x)y`:       "look-around",
		`(?<!a)b`:      "look-around",
		`(['"]).*\1`:   "RE2 has no backreferences",
	}
	for p, want := range refused {
		err := checkRE2(p)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != "pattern" || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want a pattern error containing %q", p, err, want)
		}
	}
	for _, p := range []string{`\bHome\b`, `<Home>`, `[\<\>]`, `\\<`, `\(?=`, `(?<name>x)`, `(?i)x`, `(?:a)`, `[(?=]`, `[]\<]`, `\\1`, `a{1}`} {
		if err := checkRE2(p); err != nil {
			t.Errorf("%s: refused: %v", p, err)
		}
	}
}
