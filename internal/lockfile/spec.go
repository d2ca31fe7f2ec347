package lockfile

import (
	"net/url"
	"strings"

	"github.com/pkgscope/pkgscope/internal/npmspec"
	"github.com/pkgscope/pkgscope/internal/semver"
)

// splitNameAt splits "name@rest" at the "@" that ends the name
// (npmspec.SplitNameSpec), so that "@scope/pkg@1.0.0" gives "@scope/pkg"
// and "1.0.0". ok is false when there is no such "@".
func splitNameAt(s string) (name, rest string, ok bool) {
	r, ok := npmspec.SplitNameSpec(s)
	return r.Name, r.Spec, ok
}

// isVersion reports whether v is an exact version, as lockfiles write
// registry versions.
func isVersion(v string) bool {
	return v != "" && v[0] >= '0' && v[0] <= '9' && strings.TrimSpace(v) == v && semver.Valid(v)
}

// hostedGit are the hosts whose https://host/user/repo URLs npm reads as
// git repositories (hosted-git-info), not as tarballs.
var hostedGit = map[string]bool{"github.com": true, "gitlab.com": true, "bitbucket.org": true, "gist.github.com": true}

// classifySpec types a declared spec, what follows "name@" in a
// package.json, as npm-package-arg does. For an alias it also returns the
// real name and its range ("npm:bar@^1" gives "bar", "^1").
func classifySpec(spec string) (kind Kind, aliasName, aliasRange string) {
	s := strings.TrimSpace(spec)
	lower := strings.ToLower(s)
	switch {
	case strings.HasPrefix(lower, "npm:"):
		rest := s[len("npm:"):]
		if name, rng, ok := splitNameAt(rest); ok {
			return Alias, name, rng
		}
		if rest == "" {
			return Other, "", ""
		}
		return Alias, rest, ""
	case strings.HasPrefix(lower, "workspace:"):
		return Workspace, "", ""
	case strings.HasPrefix(lower, "link:"), strings.HasPrefix(lower, "portal:"):
		return Link, "", ""
	case strings.HasPrefix(lower, "file:"):
		return File, "", ""
	case isGitSpec(lower):
		return Git, "", ""
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		return Tarball, "", ""
	case isPathSpec(s):
		return File, "", ""
	case strings.Contains(lower, ":"):
		// A protocol npm does not know (yarn's exec:, patch:): not a range.
		return Other, "", ""
	}
	return Registry, "", ""
}

// isGitSpec reports whether a lower-cased spec names a git repository:
// a git URL (isGitURL) or GitHub's shorthand "user/repo".
func isGitSpec(lower string) bool {
	if isGitURL(lower) {
		return true
	}
	// GitHub shorthand "user/repo" or "user/repo#ref": one slash, no
	// scope, no protocol, not a path.
	head, _, _ := strings.Cut(lower, "#")
	user, repo, ok := strings.Cut(head, "/")
	return ok && user != "" && repo != "" && !strings.ContainsAny(head, ":@ ") &&
		!strings.Contains(repo, "/") && user[0] != '.' && user[0] != '~'
}

// isGitURL reports whether a lower-cased string is a git URL: a git
// protocol, a hosting shorthand with its prefix ("github:u/r"), an
// scp-like "git@host:path", or an http(s) URL of a known git host or
// ending in .git.
func isGitURL(lower string) bool {
	for _, p := range []string{"git+", "git:", "github:", "gitlab:", "bitbucket:", "gist:"} {
		if strings.HasPrefix(lower, p) {
			return true
		}
	}
	if strings.HasPrefix(lower, "git@") && strings.Contains(lower, ":") {
		return true
	}
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		u, err := url.Parse(lower)
		if err != nil {
			return false
		}
		if strings.HasSuffix(u.Path, ".git") || u.Hostname() == "codeload.github.com" {
			return true // codeload: pnpm's tarballs of GitHub commits
		}
		segs := strings.Split(strings.Trim(u.Path, "/"), "/")
		return hostedGit[u.Hostname()] && len(segs) == 2 && segs[1] != "" && !strings.HasSuffix(u.Path, ".tgz")
	}
	return false
}

// isPathSpec reports whether s is a local path npm reads as a directory
// or tarball: "./x", "../x", "/x", "~/x", ".", "..", or a name ending in
// a tarball extension.
func isPathSpec(s string) bool {
	switch {
	case s == "." || s == "..",
		strings.HasPrefix(s, "./"), strings.HasPrefix(s, "../"),
		strings.HasPrefix(s, "/"), strings.HasPrefix(s, "~/"):
		return true
	}
	lower := strings.ToLower(s)
	return !strings.Contains(lower, ":") && (strings.HasSuffix(lower, ".tgz") || strings.HasSuffix(lower, ".tar.gz") || strings.HasSuffix(lower, ".tar"))
}

// classifyResolved types a resolved source as lockfiles record it (npm's
// "resolved", pnpm's and bun's resolution strings): a git URL, a file:
// path, or an http(s) URL. ok is false for anything else.
func classifyResolved(resolved string) (Kind, bool) {
	lower := strings.ToLower(resolved)
	switch {
	case lower == "":
		return 0, false
	case isGitURL(lower):
		return Git, true
	case strings.HasPrefix(lower, "file:"):
		return File, true
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		return Tarball, true
	}
	return 0, false
}
