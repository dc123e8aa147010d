// Package mmapfile loads a file into memory for the readers that keep
// slices of it: mapped read-only where the system allows, read otherwise.
package mmapfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
)

// Load returns the contents of the named file, mapped if possible. unmap
// releases the mapping; it is nil if the data were read.
func Load(name string) (data []byte, unmap func() error, err error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if fi.IsDir() {
		return nil, nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("is a directory")}
	}
	size := fi.Size()
	// Empty files cannot be mapped, and the size of other files than
	// regular ones says nothing: read them.
	if fi.Mode().IsRegular() && size > 0 && int64(int(size)) == size {
		if data, unmap, err := mmapFile(f, int(size)); err == nil {
			return data, unmap, nil
		}
		// Fall back to reading, as on file systems that cannot map.
	}
	var buf bytes.Buffer
	if fi.Mode().IsRegular() && size > 0 && int64(int(size)) == size {
		buf.Grow(int(size) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return buf.Bytes(), nil, nil
}
