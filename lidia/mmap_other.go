//go:build !unix

package lidia

import (
	"errors"
	"os"
)

// mmapFile is not implemented here: Open reads the file instead.
func mmapFile(f *os.File, size int) (data []byte, unmap func() error, err error) {
	return nil, nil, errors.ErrUnsupported
}
