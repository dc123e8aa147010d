//go:build unix

package mmapfile

import (
	"os"
	"syscall"
)

// openNonblock opens name for reading with O_NONBLOCK, which makes opening
// a FIFO without a writer return at once; reads of a regular file ignore
// the flag.
func openNonblock(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// mmapFile maps the first size bytes of f read-only.
func mmapFile(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
}

// munmap releases a mapping made by mmapFile. It runs as a cleanup, when
// nothing can read the mapping any more; an error cannot be reported and
// leaves the mapping in place.
func munmap(b []byte) { syscall.Munmap(b) }
