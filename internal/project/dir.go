package project

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pkgscope/pkgscope/internal/explore"
	"github.com/pkgscope/pkgscope/internal/lockfile"
)

// RegisterDir registers the project in dir: the lockfile lockfile.Find
// picks there, with the package.json beside it. `mirror mcp` calls it on
// a project call over stdio, so the local project needs no upload step;
// unchanged files give the same id at the cost of one lookup.
func (s *Service) RegisterDir(ctx context.Context, dir string) (*Registered, error) {
	path, err := lockfile.Find(dir)
	if errors.Is(err, lockfile.ErrNoLockfile) {
		return nil, &explore.InputError{Field: "project", Err: fmt.Errorf("%s has no lockfile or package.json to explore as a project: give packageName", dir)}
	}
	if err != nil {
		return nil, err
	}
	content, err := s.readCapped(path)
	if err != nil {
		return nil, err
	}
	u := Upload{Lockfile: File{Name: filepath.Base(path), Content: string(content)}}
	if filepath.Base(path) != "package.json" {
		man, err := s.readCapped(filepath.Join(dir, "package.json"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		u.PackageJSON = string(man)
	}
	reg, err := s.Register(ctx, u)
	if errors.Is(err, ErrBadInput) || errors.Is(err, ErrTooLarge) {
		return nil, &explore.InputError{Field: "project", Err: fmt.Errorf("%s: %w", path, err)}
	}
	return reg, err
}

// readCapped reads at most MaxLockfileBytes+1 bytes of path, so an
// oversized file is refused by Register without being read whole.
func (s *Service) readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, s.lim.MaxLockfileBytes+1))
}
