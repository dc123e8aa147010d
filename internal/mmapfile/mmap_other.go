//go:build !unix

package mmapfile

import (
	"errors"
	"os"
)

// mmapFile is not implemented here: Load reads the file instead.
func mmapFile(f *os.File, size int) (data []byte, unmap func() error, err error) {
	return nil, nil, errors.ErrUnsupported
}
