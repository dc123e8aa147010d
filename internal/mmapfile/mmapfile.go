// Package mmapfile loads a file into memory for the readers that keep
// slices of it: mapped read-only where the system allows, read otherwise.
//
// The memory belongs to a Data. Nothing releases it explicitly: a mapping
// is released by a cleanup (runtime.AddCleanup) once its Data is
// unreachable, so whoever hands out slices of it must keep the Data
// reachable as long as those slices may be read.
package mmapfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular reports a file that is not a regular file (a directory, a
// device, a FIFO, a socket): its size says nothing of what reading it
// gives, which may be endless or may block forever.
var ErrNotRegular = errors.New("not a regular file")

// Data is the contents of a file, mapped or read into memory.
type Data struct {
	b      []byte
	mapped bool
}

// Bytes returns the contents. They must not be modified, and may be read
// only while d is reachable: see the package documentation.
func (d *Data) Bytes() []byte { return d.b }

// Mapped reports whether the contents are mapped (rather than read).
func (d *Data) Mapped() bool { return d.mapped }

// Load returns the contents of the named file, which must be a regular
// file (symbolic links are followed), mapped if possible. Other files are
// refused with an *fs.PathError wrapping ErrNotRegular (whose message, for
// a directory, is "is a directory"), without reading from them and without
// blocking (a FIFO without a writer).
func Load(name string) (*Data, error) {
	return LoadReading(name, nil)
}

// LoadReading is Load, and then, if read is not nil, calls read with the
// contents and an io.ReaderAt that reads the same bytes at the same
// offsets: from a mapped file with pread(2), a system call of a few
// microseconds, where the first read of a page of a fresh mapping costs a
// page fault, and on a virtual machine often ten times as much, since the
// page tables it fills must be torn down again (BENCHMARKS.md, "Big
// binaries"). A reader of headers reads them through it. The ReaderAt may
// be used only during the call; read's error is returned, with the Data.
func LoadReading(name string, read func(b []byte, r io.ReaderAt) error) (*Data, error) {
	if d, done, err := mapFile(name, read); done {
		return d, err
	}
	// Read the file: on systems without mmap, and for files that cannot
	// be mapped. Stat first, so that opening a FIFO cannot block; the
	// file opened is checked again, as the name may have changed in
	// between.
	if fi, err := os.Stat(name); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, notRegular(name, fi.IsDir())
	}
	f, err := openNonblock(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(name, fi.IsDir())
	}
	size, err := checkSize(name, fi.Size())
	if err != nil {
		return nil, err
	}
	// The file is regular, so its size bounds what is read.
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	d := &Data{b: b}
	if read != nil {
		return d, read(b, bytesAt(b))
	}
	return d, nil
}

// bytesAt reads a byte slice as an io.ReaderAt.
type bytesAt []byte

func (b bytesAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// checkSize returns the size of the named file as an int.
func checkSize(name string, size int64) (int, error) {
	if size < 0 || int64(int(size)) != size {
		return 0, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("file of %d bytes too large to load", size)}
	}
	return int(size), nil
}

// notRegular returns the error for name, which is not a regular file.
func notRegular(name string, isDir bool) error {
	err := ErrNotRegular
	if isDir {
		err = errIsDir{}
	}
	return &fs.PathError{Op: "open", Path: name, Err: err}
}

// errIsDir is ErrNotRegular for a directory, saying so.
type errIsDir struct{}

func (errIsDir) Error() string { return "is a directory" }
func (errIsDir) Unwrap() error { return ErrNotRegular }
