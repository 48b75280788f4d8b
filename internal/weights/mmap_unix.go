//go:build unix

package weights

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps path read-only. Empty files are returned as an empty slice.
func mapFile(path string) ([]byte, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if size == 0 {
		return []byte{}, nil, nil
	}
	if size != int64(int(size)) {
		return nil, nil, fmt.Errorf("%s: file too large to map", path)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		// Fall back to reading (e.g. file systems without mmap support).
		b, rerr := os.ReadFile(path)
		if rerr != nil {
			return nil, nil, rerr
		}
		return b, nil, nil
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
