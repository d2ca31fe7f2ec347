package english

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "file", "0 files"},
		{1, "file", "1 file"},
		{2, "file", "2 files"},
		{1, "version", "1 version"},
		{40, "version", "40 versions"},
		{2, "match", "2 matches"},
		{1, "match", "1 match"},
		{3, "entry", "3 entries"},
		{3, "key", "3 keys"},
		{2, "box", "2 boxes"},
		{2, "bus", "2 buses"},
		{2, "wish", "2 wishes"},
		{2, "matching line", "2 matching lines"},
		{-1, "file", "-1 files"},
	} {
		if got := Count(tc.n, tc.noun); got != tc.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tc.n, tc.noun, got, tc.want)
		}
	}
	if got := CountAs(1, "file or folder", "files and folders"); got != "1 file or folder" {
		t.Errorf("CountAs(1) = %q", got)
	}
	if got := CountAs(5, "file or folder", "files and folders"); got != "5 files and folders" {
		t.Errorf("CountAs(5) = %q", got)
	}
}
