package web

import "testing"

// TestDepHrefStaysOnThePackagePages: a dependency's name and range come
// from the package's own package.json; a name that is not a package's
// ("../../logout", "/evil", a URL) gets no link, so a package author
// cannot make the page link any other page of the mirror, and the range
// is escaped within the link's path.
func TestDepHrefStaysOnThePackagePages(t *testing.T) {
	for _, tc := range []struct{ name, rng, want string }{
		{"react", "^18.2.0", "/browse/react@%5E18.2.0"},
		{"@types/node", "1.x || 2", "/browse/@types/node@1.x%20%7C%7C%202"},
		{"x", "../../../logout?next=//evil.example", "/browse/x@..%2F..%2F..%2Flogout%3Fnext=%2F%2Fevil.example"},
		{"../../../logout", "1", ""},
		{"../../warm/0123456789abcdef", "1", ""},
		{"/evil.example", "1", ""},
		{"https://evil.example/x", "1", ""},
		{"@s/../../v1/npm/x", "1", ""},
	} {
		if got := depHref(tc.name, tc.rng); got != tc.want {
			t.Errorf("depHref(%q, %q) = %q, want %q", tc.name, tc.rng, got, tc.want)
		}
	}
}
