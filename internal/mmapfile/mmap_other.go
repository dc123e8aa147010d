//go:build !unix

package mmapfile

import (
	"errors"
	"os"
)

// openNonblock opens name for reading.
func openNonblock(name string) (*os.File, error) { return os.Open(name) }

// mmapFile is not implemented here: Load reads the file instead.
func mmapFile(f *os.File, size int) ([]byte, error) {
	return nil, errors.ErrUnsupported
}

// munmap is never called: nothing is mapped.
func munmap([]byte) {}
