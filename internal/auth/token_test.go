package auth

import (
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func sum(tok string) [32]byte { return sha256.Sum256([]byte(tok)) }

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Token
	}{
		{"one", "tok-one", []Token{{Sum: sum("tok-one")}}},
		{"several with spaces", " a1 , b2,,c3 ", []Token{{Sum: sum("a1")}, {Sum: sum("b2")}, {Sum: sum("c3")}}},
		{"scopes continue over commas", "a1:@myorg,@other,b2", []Token{
			{Sum: sum("a1"), Scopes: []string{"@myorg", "@other"}},
			{Sum: sum("b2")},
		}},
		{"repeated scope kept once", "a1:@x,@x", []Token{{Sum: sum("a1"), Scopes: []string{"@x"}}}},
		{"hashed", Hash("secret-1"), []Token{{Sum: sum("secret-1")}}},
		{"hashed with scopes", Hash("secret-1") + ":@myorg,@b", []Token{{Sum: sum("secret-1"), Scopes: []string{"@myorg", "@b"}}}},
		{"b64token alphabet", "aZ09-._~+/==", []Token{{Sum: sum("aZ09-._~+/==")}}},
		{"the word sha256 alone is a token", "sha256", []Token{{Sum: sum("sha256")}}},
		{"sha256 token with a scope", "sha256:@x", []Token{{Sum: sum("sha256"), Scopes: []string{"@x"}}}},
		{"empty", "", []Token{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseList(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !equalTokens(got, tc.want) {
				t.Errorf("ParseList(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func equalTokens(a, b []Token) bool {
	return slices.EqualFunc(a, b, func(x, y Token) bool { return x.Sum == y.Sum && slices.Equal(x.Scopes, y.Scopes) })
}

// TestParseErrorsNeverQuoteTheEntry: a misconfigured line may well be a
// real token with a typo; the error must say where, not what.
func TestParseErrorsNeverQuoteTheEntry(t *testing.T) {
	for _, tc := range []struct{ name, in, where string }{
		{"scope without token", "@myorg", "element 1"},
		{"scope after an unscoped token", "s3cretTOKENvalue,@myorg", "element 2"},
		{"bad byte", "s3cret TOKENvalue", "entry 1"},
		{"bad byte later", "ok-token,s3cret\"TOKENvalue", "entry 2"},
		{"scope without @", "s3cretTOKENvalue:myorg", "entry 1"},
		{"scope with a slash", "s3cretTOKENvalue:@myorg/pkg", "entry 1"},
		{"empty scope list", "s3cretTOKENvalue:", "entry 1"},
		{"short hash", "sha256:abcd", "entry 1"},
		{"non-hex hash", "sha256:" + strings.Repeat("zz", 32), "entry 1"},
		{"only padding", "==", "entry 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseList(tc.in)
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseList(%q) = %v, want ErrSyntax", tc.in, err)
			}
			if !strings.Contains(err.Error(), tc.where) {
				t.Errorf("error %q does not say %q", err, tc.where)
			}
			for _, secret := range []string{"s3cret", "TOKENvalue", "abcd", "zzzz"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q quotes the entry (%q)", err, secret)
				}
			}
		})
	}
}

func TestParseFile(t *testing.T) {
	in := "# org tokens\n\n  ci-token-1  \nagent-token-2:@myorg\n" + Hash("hashed-3") + ":@a,@b\n"
	got, err := ParseFile(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Token{
		{Sum: sum("ci-token-1")},
		{Sum: sum("agent-token-2"), Scopes: []string{"@myorg"}},
		{Sum: sum("hashed-3"), Scopes: []string{"@a", "@b"}},
	}
	if !equalTokens(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	_, err = ParseFile(strings.NewReader("good-1\n\n# c\nbad:token:value\n"))
	if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "line 4") || strings.Contains(err.Error(), "bad") {
		t.Errorf("error %v: want ErrSyntax naming line 4 without the text", err)
	}
}

func TestLoadMergesFileAndList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("file-token-1:@myorg\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, "env-token-2")
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 2 {
		t.Fatalf("Len = %d, want 2", s.Len())
	}
	id, ok := s.Verify("file-token-1")
	if !ok || !slices.Equal(id.Scopes, []string{"@myorg"}) {
		t.Errorf("file token: %+v %v", id, ok)
	}
	if _, ok := s.Verify("env-token-2"); !ok {
		t.Error("env token not accepted")
	}
	if _, err := Load(path, "file-token-1"); err == nil || strings.Contains(err.Error(), "file-token-1") {
		t.Errorf("a repeated token: %v, want an error that does not quote it", err)
	}
	if s, err := Load("", ""); err != nil || s.Len() != 0 {
		t.Errorf("nothing configured: %v, %d tokens", err, s.Len())
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing"), ""); err == nil || !strings.Contains(err.Error(), "tokens-file") {
		t.Errorf("missing file: %v, want an error naming tokens-file", err)
	}
}

func TestVerify(t *testing.T) {
	ts, err := ParseList("alpha-1,beta-2:@myorg," + Hash("gamma-3"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSet(ts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tok    string
		ok     bool
		scopes []string
	}{
		{"alpha-1", true, nil},
		{"beta-2", true, []string{"@myorg"}},
		{"gamma-3", true, nil},
		{Hash("gamma-3"), false, nil}, // the stored form is not itself a token
		{"alpha-", false, nil},
		{"alpha-1 ", false, nil},
		{"", false, nil},
	} {
		id, ok := s.Verify(tc.tok)
		if ok != tc.ok || !slices.Equal(id.Scopes, tc.scopes) {
			t.Errorf("Verify(%q) = %+v, %v; want ok=%v scopes=%v", tc.tok, id, ok, tc.ok, tc.scopes)
		}
		if ok && id.ID != (Token{Sum: sum(tc.tok)}).ID() {
			t.Errorf("Verify(%q).ID = %q", tc.tok, id.ID)
		}
	}
	var none *Set
	if _, ok := none.Verify("alpha-1"); ok {
		t.Error("a nil set accepted a token")
	}
}

func TestIdentityAllows(t *testing.T) {
	all := Identity{}
	org := Identity{Scopes: []string{"@myorg", "@other"}}
	for _, tc := range []struct {
		id   Identity
		name string
		want bool
	}{
		{all, "react", true},
		{all, "@myorg/x", true},
		{org, "@myorg/x", true},
		{org, "@other/y", true},
		{org, "@myorgx/y", false},
		{org, "react", false},
		{org, "@myorg", false},
		{org, "@MyOrg/x", true}, // scopes compare in any case, as .npmrc's do
	} {
		if got := tc.id.Allows(tc.name); got != tc.want {
			t.Errorf("%v.Allows(%q) = %v, want %v", tc.id.Scopes, tc.name, got, tc.want)
		}
	}
}

// TestPrivateScopeInAnotherCase: an unrestricted token may not read a
// private scope's package, however the scope is spelt.
func TestPrivateScopeInAnotherCase(t *testing.T) {
	all, org := Identity{}, Identity{Scopes: []string{"@priv"}}
	for _, name := range []string{"@priv/x", "@PRIV/x", "@Priv/x"} {
		if all.AllowsPackage(name, true) {
			t.Errorf("an unrestricted token reads private %q", name)
		}
		if !org.AllowsPackage(name, true) {
			t.Errorf("a token for @priv may not read %q", name)
		}
	}
}

// FuzzParseList: the parser never panics, every error wraps ErrSyntax and
// every scope it accepts is a bare "@scope".
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"a", "a:@x,@y,b", Hash("x") + ":@s", "sha256:@x", "@x", "a,,b", "a:", "==", "a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ts, err := ParseList(in)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v does not wrap ErrSyntax", err)
			}
			return
		}
		for _, tok := range ts {
			for _, sc := range tok.Scopes {
				if !strings.HasPrefix(sc, "@") || strings.ContainsAny(sc, ",:/") {
					t.Fatalf("accepted scope %q", sc)
				}
			}
		}
	})
}
