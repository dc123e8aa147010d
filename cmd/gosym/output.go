package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// An outputError is an error writing a command's output file: its name as
// the user gave it, and the cause. Errors of whatever produces the output
// are not outputErrors.
type outputError struct {
	out string
	err error
}

func (e *outputError) Error() string { return e.out + ": " + e.err.Error() }
func (e *outputError) Unwrap() error { return e.err }

// outError returns err, an error opening, writing or renaming out (or the
// temporary file that becomes it), as an *outputError that names out: the
// name of a temporary file means nothing to the user.
func outError(out string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &outputError{out, err}
}

// errNotOutput is the error for an OUT that is neither a regular file
// nor something a shell's > would write into.
var errNotOutput = errors.New("not a regular file, FIFO or character device")

// writeOutput is the one way commands write a file named by -o OUT: it
// calls write with a buffered writer to OUT and flushes it. An error
// writing OUT is an *outputError; an error of write's own (other than
// one of its writes failing) is returned as it is. What OUT is decides
// how it is written, so that nothing but a regular file is ever
// replaced:
//
//   - "-": standard output.
//   - a regular file, or nothing: a temporary file in the same directory,
//     renamed over OUT once complete, so that OUT is never left half
//     written; an existing file keeps its permission bits, a new one gets
//     0644.
//   - a FIFO or a character device (/dev/null, a terminal): written in
//     place, as a shell's > writes it; a FIFO must have a reader (it
//     fails at once otherwise, where the shell would wait for one).
//   - a symbolic link: followed, and what it points to is written as
//     above; the link stays. A link to nothing creates its target.
//   - anything else (a directory, a socket, a block device): refused.
func writeOutput(out string, stdout io.Writer, write func(io.Writer) error) error {
	if out == "-" {
		return writeTo(stdout, "standard output", write)
	}
	target := out
	fi, err := os.Lstat(out)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err = filepath.EvalSymlinks(out)
		if errors.Is(err, fs.ErrNotExist) {
			// A link to nothing (or to a missing directory): opening it
			// creates its target, if its directory exists.
			return writeInPlace(out, os.O_CREATE|os.O_TRUNC, nil, write)
		}
		if err != nil {
			return outError(out, err)
		}
		fi, err = os.Lstat(target)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return replaceFile(out, target, 0o644, write)
	case err != nil:
		return outError(out, err)
	case fi.Mode().IsRegular():
		return replaceFile(out, target, fi.Mode().Perm(), write)
	case fi.IsDir():
		return &outputError{out, errors.New("is a directory")}
	case fi.Mode()&fs.ModeNamedPipe != 0:
		// Without a reader, opening fails at once (ENXIO) rather than
		// wait for one; writes wait for the reader as usual.
		return writeInPlace(out, syscall.O_NONBLOCK, fi, write)
	case fi.Mode()&fs.ModeCharDevice != 0:
		return writeInPlace(out, 0, fi, write)
	}
	return &outputError{out, errNotOutput}
}

// writeInPlace writes to the file out opened with os.O_WRONLY|flag. When
// was is not nil, out must still be the same file once opened (the FIFO or
// device it was), not something put there since.
func writeInPlace(out string, flag int, was fs.FileInfo, write func(io.Writer) error) error {
	f, err := os.OpenFile(out, os.O_WRONLY|flag, 0o644)
	if errors.Is(err, syscall.ENXIO) && was != nil && was.Mode()&fs.ModeNamedPipe != 0 {
		return &outputError{out, fmt.Errorf("FIFO without a reader: %w", syscall.ENXIO)}
	}
	if err != nil {
		return outError(out, err)
	}
	defer f.Close()
	if was != nil {
		now, err := f.Stat()
		if err != nil {
			return outError(out, err)
		}
		if !os.SameFile(was, now) {
			return &outputError{out, errors.New("replaced while opening it")}
		}
	}
	if err := writeTo(f, out, write); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return outError(out, err)
	}
	return nil
}

// replaceFile writes a temporary file next to target, with the permission
// bits perm, and renames it over target; errors name out.
func replaceFile(out, target string, perm fs.FileMode, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(target), filepath.Base(target)+".tmp*")
	if err != nil {
		return outError(out, err)
	}
	if err = tmp.Chmod(perm); err != nil { // CreateTemp makes it 0600
		err = outError(out, err)
	} else {
		err = writeTo(tmp, out, write)
	}
	if err == nil {
		if err = tmp.Close(); err != nil {
			err = outError(out, err)
		}
	}
	if err == nil {
		if err = os.Rename(tmp.Name(), target); err != nil {
			err = outError(out, err)
		}
	}
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// writeTo calls write with a buffered writer to w and flushes it; errors
// writing w are *outputErrors naming out.
func writeTo(w io.Writer, out string, write func(io.Writer) error) error {
	ew := &errWriter{w: w}
	bw := bufio.NewWriterSize(ew, 1<<20)
	err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if ew.err != nil {
		// Whatever write returned, it failed because w did.
		return outError(out, ew.err)
	}
	return err
}

// errWriter writes to w and remembers its first error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	} else if n < len(p) {
		e.err = io.ErrShortWrite
	}
	return n, e.err
}

// describe returns err for printing by a command that wrote the output of
// the file src (its binary, its profile): an *outputError names the output
// and is printed as it is, other errors are about src.
func describe(src string, err error) error {
	var oe *outputError
	if errors.As(err, &oe) {
		return err
	}
	return fileError(src, err)
}
