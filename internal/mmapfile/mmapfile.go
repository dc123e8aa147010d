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
	"sync"
	"unsafe"
)

// ErrNotRegular reports a file that is not a regular file (a directory, a
// device, a FIFO, a socket): its size says nothing of what reading it
// gives, which may be endless or may block forever.
var ErrNotRegular = errors.New("not a regular file")

// Data is the contents of a file, mapped or read into memory.
type Data struct {
	b      []byte
	mapped bool
	// f is the open file of a mapping LoadReading made, through which
	// ReadAt reads until Close; nil for others.
	f *file
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
	return load(name, nil, false)
}

// LoadReading is Load, but a mapped file stays open until Close, so that
// the Data's ReadAt and Copy read it with pread(2), a system call of a
// few microseconds, where the first read of a page of a fresh mapping
// costs a page fault, and on a virtual machine often ten times as much,
// since the page tables it fills must be torn down again (BENCHMARKS.md,
// "Big binaries"). A reader of headers, and of whatever else it reads
// once, reads through them. If read is not nil, LoadReading calls it
// with the contents and the Data as an io.ReaderAt; read's error is
// returned, with the Data.
func LoadReading(name string, read func(b []byte, r io.ReaderAt) error) (*Data, error) {
	return load(name, read, true)
}

// load is Load (keep false) or LoadReading (keep true).
func load(name string, read func(b []byte, r io.ReaderAt) error, keep bool) (*Data, error) {
	if d, done, err := mapFile(name, read, keep); done {
		if err != nil && d != nil {
			d.Close() // the file kept open for read is of no further use
		}
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
		return d, read(b, d)
	}
	return d, nil
}

// ReadAt reads len(p) bytes of the contents at offset off, as
// io.ReaderAt: with pread(2) while the file LoadReading mapped is open,
// else from the contents in memory. Either way the bytes are the same
// (a file changed while it is in use aside); a read the file ends short
// returns io.EOF.
func (d *Data) ReadAt(p []byte, off int64) (int, error) {
	if d.f != nil {
		if n, ok, err := d.f.readAt(p, off); ok {
			return n, err
		}
	}
	if off < 0 || off > int64(len(d.b)) {
		return 0, io.EOF
	}
	n := copy(p, d.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Copy copies src into dst, as the built-in copy does, and returns the
// number of bytes copied. When src lies inside the contents of a Data
// LoadReading mapped and the file is still open, the bytes are read from
// the file with pread(2) rather than from memory, so that reading them
// costs no page fault: for what is read once, such as the headers a
// reader checks when it opens a file. src must not overlap dst.
func (d *Data) Copy(dst, src []byte) int {
	n := min(len(dst), len(src))
	if n == 0 {
		return 0
	}
	if off, ok := d.offsetOf(src[:n]); ok && d.f != nil {
		if m, ok, _ := d.f.readAt(dst[:n], off); ok && m == n {
			return n
		}
	}
	return copy(dst, src)
}

// offsetOf returns the offset of b in d's contents; false if b is not a
// part of them.
func (d *Data) offsetOf(b []byte) (int64, bool) {
	if len(b) == 0 || len(d.b) == 0 {
		return 0, false
	}
	// Comparing addresses, never making a pointer of one.
	base := uintptr(unsafe.Pointer(unsafe.SliceData(d.b)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < base || p-base > uintptr(len(d.b)) || uintptr(len(b)) > uintptr(len(d.b))-(p-base) {
		return 0, false
	}
	return int64(p - base), true
}

// Close closes the file LoadReading kept open; ReadAt and Copy read the
// contents in memory from then on. The contents stay readable (see the
// package documentation). It does nothing for other Data, or a second
// time.
func (d *Data) Close() {
	if d.f != nil {
		d.f.close()
	}
}

// file is an open file that a Data reads with pread(2) until it is
// closed: by Data.Close, or by the cleanup that unmaps the Data.
type file struct {
	mu   sync.RWMutex // held for reading by each pread, for writing by close
	fd   int          // -1 once closed
	size int64
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
