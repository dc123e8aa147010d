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
// If keep, the file of a mapping stays open, for Data.ReadAt, until
// Data.Close or the cleanup that unmaps it. read, if not nil, is called
// with the mapping and the Data (see LoadReading).
func mapFile(name string, read func([]byte, io.ReaderAt) error, keep bool) (d *Data, done bool, err error) {
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
	defer func() {
		if d == nil || d.f == nil {
			syscall.Close(fd)
		}
	}()
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
			return d, true, read(d.b, d)
		}
		return d, true, nil
	}
	b, err := syscall.Mmap(fd, 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, false, nil
	}
	d = &Data{b: b, mapped: true}
	if keep {
		d.f = &file{fd: fd, size: int64(size)}
	}
	runtime.AddCleanup(d, release, mapping{b, d.f})
	if read != nil {
		return d, true, read(b, d)
	}
	return d, true, nil
}

// readAt reads p at off with pread(2), as io.ReaderAt, stopping at the
// size the file had when it was mapped. ok is false once the file is
// closed: nothing was read.
func (f *file) readAt(p []byte, off int64) (n int, ok bool, err error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.fd < 0 {
		return 0, false, nil
	}
	if off < 0 {
		return 0, true, syscall.EINVAL
	}
	for n < len(p) && off+int64(n) < f.size {
		m, err := retry(func() (int, error) { return syscall.Pread(f.fd, p[n:], off+int64(n)) })
		if err != nil {
			return n, true, err
		}
		if m <= 0 {
			break
		}
		n += m
	}
	if n < len(p) {
		return n, true, io.EOF
	}
	return n, true, nil
}

// close closes the file, once.
func (f *file) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fd >= 0 {
		syscall.Close(f.fd)
		f.fd = -1
	}
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

// A mapping is what the cleanup of a Data mapFile made releases: the
// mapping, and the file kept open for it (nil if none).
type mapping struct {
	b []byte
	f *file
}

// release unmaps a mapping made by mapFile, and closes its file if it is
// still open. It runs as a cleanup, when nothing can read the mapping any
// more; an error cannot be reported and leaves the mapping in place.
func release(m mapping) {
	if m.f != nil {
		m.f.close()
	}
	syscall.Munmap(m.b)
}
