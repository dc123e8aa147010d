//go:build !unix

package mmapfile

import (
	"io"
	"os"
)

// mapFile maps nothing here: Load reads the file instead.
func mapFile(name string, read func([]byte, io.ReaderAt) error) (d *Data, done bool, err error) {
	return nil, false, nil
}

// openNonblock opens name for reading.
func openNonblock(name string) (*os.File, error) { return os.Open(name) }
