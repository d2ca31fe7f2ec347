package npmspec

import (
	"errors"
	"strings"
)

// Ref is a package named the way people and URLs write it:
// "name@spec", the spec possibly empty (latest).
type Ref struct {
	Name string
	Spec string
}

// SplitPath splits "name[@spec][/path]" — the shape of the mirror's URLs
// (/v1/npm/…, /browse/…, jsDelivr's /npm/…) and of what agents type — into
// the package and the path inside it. A scoped name keeps its slash
// ("@types/react@19/index.d.ts"), which may also come escaped as %2f or
// %2F ("@types%2freact"). The name and spec are not validated here
// (ValidateName, ParseSpec do that); only a scope without a name is an
// error. The path is returned as given, "" when absent, and ends with "/"
// when the input did.
func SplitPath(s string) (Ref, string, error) {
	if strings.HasPrefix(s, "@") {
		i := strings.Index(s, "%2f")
		if j := strings.Index(s, "%2F"); j > 0 && (i < 0 || j < i) {
			i = j
		}
		if slash := strings.IndexByte(s, '/'); i > 0 && (slash < 0 || i < slash) {
			s = s[:i] + "/" + s[i+3:]
		}
	}
	var nameSpec, path string
	if strings.HasPrefix(s, "@") {
		segs := strings.SplitN(s, "/", 3)
		if len(segs) < 2 || segs[1] == "" {
			return Ref{}, "", errors.New("a scoped name needs a name after the scope: @scope/name[@version]")
		}
		nameSpec = segs[0] + "/" + segs[1]
		if len(segs) == 3 {
			path = segs[2]
		}
	} else {
		nameSpec, path, _ = strings.Cut(s, "/")
	}
	r, _ := SplitNameSpec(nameSpec)
	if r.Name == "" || r.Name == "@" || strings.HasSuffix(r.Name, "/") {
		return Ref{}, "", errors.New("missing package name: give name[@version]")
	}
	if path == "" && strings.HasSuffix(s, "/") && !strings.HasSuffix(nameSpec, "/") {
		return r, "", nil
	}
	return r, path, nil
}

// SplitNameSpec splits "name@spec" as npm install and lockfiles write it,
// at the first "@" after the name's first character, the name starting
// after a scope's slash: "@types/react@^19" is "@types/react" and "^19",
// "foo@npm:bar@1" is "foo" and "npm:bar@1", "@s/x@github:u/r" is "@s/x"
// and "github:u/r". ok is false when there is no such "@"; then Name is s
// and Spec "". Nothing is validated (ValidateName, ParseSpec do that).
func SplitNameSpec(s string) (r Ref, ok bool) {
	from := 1
	if strings.HasPrefix(s, "@") {
		if slash := strings.IndexByte(s, '/'); slash > 0 {
			from = slash + 2
		}
	}
	if from < len(s) {
		if i := strings.IndexByte(s[from:], '@'); i >= 0 {
			return Ref{Name: s[:from+i], Spec: s[from+i+1:]}, true
		}
	}
	return Ref{Name: s}, false
}
