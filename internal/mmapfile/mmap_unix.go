//go:build unix

package mmapfile

import (
	"io"
	"io/fs"
	"os"
	"runtime"
	"syscall"
)

// mapFile opens, checks and maps the named file with system calls: an
// os.File would also register the descriptor with the poller and set a
// finalizer, which costs more than the rest of opening a symbol table.
// O_NONBLOCK makes opening a FIFO without a writer return at once. done is
// false if the file is regular but cannot be mapped: Load reads it then.
// read, if not nil, is called with the mapping and the file, before the
// file is closed (see LoadReading).
func mapFile(name string, read func([]byte, io.ReaderAt) error) (d *Data, done bool, err error) {
	fd, err := retry(func() (int, error) {
		return syscall.Open(name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		// Some files cannot even be opened (a socket): say what they are.
		if fi, serr := os.Stat(name); serr == nil && !fi.Mode().IsRegular() {
			return nil, true, notRegular(name, fi.IsDir())
		}
		return nil, true, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if _, err := retry(func() (int, error) { return 0, syscall.Fstat(fd, &st) }); err != nil {
		return nil, true, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
	case syscall.S_IFDIR:
		return nil, true, notRegular(name, true)
	default:
		return nil, true, notRegular(name, false)
	}
	size, err := checkSize(name, st.Size)
	if err != nil {
		return nil, true, err
	}
	if size == 0 {
		// Empty files cannot be mapped.
		d = &Data{b: []byte{}}
		if read != nil {
			return d, true, read(d.b, bytesAt(d.b))
		}
		return d, true, nil
	}
	b, err := syscall.Mmap(fd, 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, false, nil
	}
	d = &Data{b: b, mapped: true}
	runtime.AddCleanup(d, munmap, b)
	if read != nil {
		return d, true, read(b, fileAt{fd, int64(size)})
	}
	return d, true, nil
}

// fileAt reads an open file of size bytes with pread(2) as an io.ReaderAt.
type fileAt struct {
	fd   int
	size int64
}

func (f fileAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	n := 0
	for n < len(p) && off+int64(n) < f.size {
		m, err := retry(func() (int, error) { return syscall.Pread(f.fd, p[n:], off+int64(n)) })
		if err != nil {
			return n, err
		}
		if m <= 0 {
			break
		}
		n += m
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// retry calls f until it does not fail with EINTR.
func retry(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// openNonblock opens name for reading with O_NONBLOCK, which makes opening
// a FIFO without a writer return at once; reads of a regular file ignore
// the flag.
func openNonblock(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// munmap releases a mapping made by mapFile. It runs as a cleanup, when
// nothing can read the mapping any more; an error cannot be reported and
// leaves the mapping in place.
func munmap(b []byte) { syscall.Munmap(b) }
