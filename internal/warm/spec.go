package warm

import (
	"strings"

	"github.com/pkgscope/pkgscope/internal/npmspec"
)

// ParseSpecArg splits what a user types to name a package, as npm install
// takes it: "react", "react@19", "@types/react@^19", "lodash@latest". An
// alias, "name@npm:other@1", warms what it aliases (other@1). The spec is
// "" (latest) when none is given. Name and spec are validated when the
// request is submitted, not here.
func ParseSpecArg(arg string) Want {
	r, _ := npmspec.SplitNameSpec(arg)
	if rest, ok := strings.CutPrefix(r.Spec, "npm:"); ok {
		r, _ = npmspec.SplitNameSpec(rest)
	}
	return Want{Name: r.Name, Spec: r.Spec}
}
