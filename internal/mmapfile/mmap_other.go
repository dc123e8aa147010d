//go:build !unix

package mmapfile

import (
	"io"
	"os"
)

// mapFile maps nothing here: Load reads the file instead.
func mapFile(name string, read func([]byte, io.ReaderAt) error, keep bool) (d *Data, done bool, err error) {
	return nil, false, nil
}

// readAt reads nothing: no file is kept open here.
func (f *file) readAt(p []byte, off int64) (n int, ok bool, err error) { return 0, false, nil }

// close does nothing.
func (f *file) close() {}

// openNonblock opens name for reading.
func openNonblock(name string) (*os.File, error) { return os.Open(name) }
