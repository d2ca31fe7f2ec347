//go:build !unix

package index

import (
	"io"
	"os"
)

// mapFile reads size bytes of f into memory where the platform has no
// mmap in golang.org/x/sys/unix (Windows): the release builds a Windows
// binary for a developer's machine (`pkgscope mcp`), whose few open
// indexes fit in memory; the shared service runs on Linux, where indexes
// are mapped.
func mapFile(f *os.File, size int) (data []byte, unmap func() error, err error) {
	data = make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, int64(size)), data); err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
