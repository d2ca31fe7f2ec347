package store

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNewVersionValidate(t *testing.T) {
	f := func(p string) File { return File{Path: p, Size: 1} }
	tests := []struct {
		name    string
		v       NewVersion
		wantErr string // "" for valid
	}{
		{"valid", NewVersion{Name: "a", Version: "1.0.0", Files: []File{f("A"), f("a"), f("a/b"), f("\xff")}}, ""},
		{"no files", NewVersion{Name: "a", Version: "1.0.0"}, ""},
		{"no name", NewVersion{Version: "1.0.0"}, "required"},
		{"no version", NewVersion{Name: "a"}, "required"},
		{"unsorted", NewVersion{Name: "a", Version: "1", Files: []File{f("b"), f("a")}}, "strict path order at 1"},
		{"duplicate", NewVersion{Name: "a", Version: "1", Files: []File{f("a"), f("a")}}, "strict path order at 1"},
		{"negative size", NewVersion{Name: "a", Version: "1", Files: []File{{Path: "a", Size: -1}}}, "negative size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.v.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestTotalBytes(t *testing.T) {
	v := NewVersion{Files: []File{{Size: 3}, {Size: 0}, {Size: 1 << 40}}}
	if got := v.TotalBytes(); got != 3+1<<40 {
		t.Errorf("TotalBytes() = %d, want %d", got, int64(3+1<<40))
	}
}
