package warm

import "strings"

// ParseSpecArg splits what a user types to name a package, as npm install
// takes it: "react", "react@19", "@types/react@^19", "lodash@latest". An
// alias, "name@npm:other@1", warms what it aliases (other@1). The spec is
// "" (latest) when none is given. Name and spec are validated when the
// request is submitted, not here.
func ParseSpecArg(arg string) Want {
	name, spec := splitAt(arg)
	if rest, ok := strings.CutPrefix(spec, "npm:"); ok {
		name, spec = splitAt(rest)
	}
	return Want{Name: name, Spec: spec}
}

// splitAt splits at the first @ after the first byte (a scope's @ is the
// first byte).
func splitAt(s string) (name, spec string) {
	if i := strings.IndexByte(s[min(1, len(s)):], '@'); i >= 0 {
		i += min(1, len(s))
		return s[:i], s[i+1:]
	}
	return s, ""
}
