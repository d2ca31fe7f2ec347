package warm

import "github.com/pkgscope/pkgscope/internal/lockfile"

// Wants lists what warming lf means: every registry dependency at its
// locked version (for a bare package.json, its declared range), aliases as
// the package they alias, and every other dependency (git, file:, link:,
// workspace, remote tarball) as skipped with the lockfile package's reason.
func Wants(lf *lockfile.Lockfile) []Want {
	wants := make([]Want, 0, len(lf.Deps))
	for _, d := range lf.Deps {
		if name, version, ok := d.Warm(); ok {
			wants = append(wants, Want{Name: name, Spec: version})
			continue
		}
		from := d.Target
		if from == "" {
			from = d.Version
		}
		wants = append(wants, Want{Name: d.Name, Spec: from, Skip: d.Kind.String() + ": " + d.Reason})
	}
	return wants
}
