package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pkgscope/pkgscope/internal/auth"
)

func TestHashToken(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := hashTokenMain(nil, strings.NewReader("tok-one\n\n  tok-two  \n"), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := auth.Hash("tok-one") + "\n" + auth.Hash("tok-two") + "\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	// The printed lines are a tokens file that accepts the tokens.
	ts, err := auth.ParseFile(&out)
	if err != nil {
		t.Fatal(err)
	}
	set, err := auth.NewSet(ts)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := set.Verify("tok-two"); !ok {
		t.Error("the hashed line does not accept its token")
	}
	for _, tc := range []struct{ in, says string }{
		{"", "no token"},
		{"\n", "no token"},
		{"ok-1\ns3cret value\n", "line 2"},
		{"s3cret:@scope\n", "line 1"},
	} {
		out.Reset()
		errOut.Reset()
		if code := hashTokenMain(nil, strings.NewReader(tc.in), &out, &errOut); code != 2 {
			t.Errorf("input %q: exit %d, want 2", tc.in, code)
		}
		if msg := errOut.String(); !strings.Contains(msg, tc.says) || strings.Contains(msg, "s3cret") {
			t.Errorf("input %q: error %q, want one saying %q without the input", tc.in, msg, tc.says)
		}
	}
}
