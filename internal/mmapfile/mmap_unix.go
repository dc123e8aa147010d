//go:build unix

package mmapfile

import (
	"os"
	"syscall"
)

// mmapFile maps the first size bytes of f read-only.
func mmapFile(f *os.File, size int) (data []byte, unmap func() error, err error) {
	data, err = syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
