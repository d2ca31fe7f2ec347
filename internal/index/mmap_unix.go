//go:build unix

package index

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f read-only; unmap releases the mapping.
func mapFile(f *os.File, size int) (data []byte, unmap func() error, err error) {
	data, err = unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return unix.Munmap(data) }, nil
}
