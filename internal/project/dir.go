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
	u, err := ReadDir(dir, s.lim.MaxLockfileBytes)
	if err != nil {
		return nil, err
	}
	reg, err := s.Register(ctx, u)
	if errors.Is(err, ErrBadInput) || errors.Is(err, ErrTooLarge) {
		return nil, &explore.InputError{Field: "project", Err: fmt.Errorf("%s: %w", filepath.Join(dir, u.Lockfile.Name), err)}
	}
	return reg, err
}

// ReadDir reads the project in dir as an Upload: the lockfile
// lockfile.Find picks there, with the package.json beside it. Each file is
// read up to maxBytes+1 bytes, so an oversized one is refused by Register
// without being read whole. `mirror mcp --remote` uploads it to the shared
// mirror; over stdio RegisterDir registers it here.
func ReadDir(dir string, maxBytes int64) (Upload, error) {
	path, err := lockfile.Find(dir)
	if errors.Is(err, lockfile.ErrNoLockfile) {
		return Upload{}, &explore.InputError{Field: "project", Err: fmt.Errorf("%s has no lockfile or package.json to explore as a project: give packageName", dir)}
	}
	if err != nil {
		return Upload{}, err
	}
	content, err := readCapped(path, maxBytes)
	if err != nil {
		return Upload{}, err
	}
	u := Upload{Lockfile: File{Name: filepath.Base(path), Content: string(content)}}
	if filepath.Base(path) != "package.json" {
		man, err := readCapped(filepath.Join(dir, "package.json"), maxBytes)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return Upload{}, err
		}
		u.PackageJSON = string(man)
	}
	return u, nil
}

// readCapped reads at most max+1 bytes of path.
func readCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max+1))
}
