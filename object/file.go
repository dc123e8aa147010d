package object

import (
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/gosym-dev/gosym/internal/mmapfile"
	"github.com/gosym-dev/gosym/internal/objfile"
)

func init() {
	objfile.NewObject = func(d objfile.Decoder) any { return newFile(d) }
}

// File is an object file of any format: opened by Open, or made from bytes
// by NewBytes or by a backend package (elfobj, machoobj, peobj,
// plan9obj, xcoffobj, wasmobj). It implements [Object], [io.Closer],
// [SymbolLookup], [SymbolIterator] and [Describer]. A File is safe for
// concurrent use.
//
// The slices SectionData returns point into the file's memory (for a File
// made by Open, its memory mapping) and must not be modified. They stay
// readable, also after Close, as long as the File is reachable: the memory
// of a File made by Open is released once the File is unreachable (see
// the package documentation, "Lifetime").
//
// After Close, Sections, SectionData and LookupSymbol return an error
// wrapping [fs.ErrClosed]; Endian, Format and Arch keep answering.
type File struct {
	dec    objfile.Decoder
	secs   []SectionHeader // dec's headers, converted once
	name   string          // the name given to Open; "" for other Files
	data   *mmapfile.Data  // the contents of a File made by Open; nil for others
	closed atomic.Bool
}

// newFile adapts d.
func newFile(d objfile.Decoder) *File {
	hs, _ := d.Sections() // the decoders' Sections never fail
	secs := make([]SectionHeader, len(hs))
	for i, h := range hs {
		secs[i] = SectionHeader{
			Name:     h.Name,
			Addr:     h.Addr,
			Size:     h.Size,
			Offset:   h.Offset,
			FileSize: h.FileSize,
			Flags:    SectionFlags(h.Flags),
		}
	}
	return &File{dec: d, secs: secs}
}

// Open opens the named file and detects its format as NewBytes does. The
// file must be a regular file (or a symbolic link to one): others, such as
// devices and FIFOs, are refused at once with an *fs.PathError. It is
// mapped into memory read-only where the operating system allows (on Unix
// systems), and read into memory elsewhere; the memory is released once
// the File is unreachable. A mapped file stays open until Close (or until
// the File is unreachable): its headers, and what package gosym reads
// once when it opens a table, are read with pread(2). A file that is not
// an object is closed before Open returns. As with any mapping, a file
// truncated by another program while it is mapped makes reading its
// sections fault.
//
// If the format is unknown, the error is an *fs.PathError wrapping
// ErrUnknownFormat.
func Open(name string) (*File, error) {
	// The headers are read with pread, not through the mapping: see
	// mmapfile.LoadReading.
	var f *File
	var derr error
	data, err := mmapfile.LoadReading(name, func(b []byte, r io.ReaderAt) error {
		f, derr = newBytes(b, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if derr != nil {
		data.Close() // not an object: its file need not stay open
		return nil, &fs.PathError{Op: "open", Path: name, Err: derr}
	}
	f.name, f.data = name, data
	return f, nil
}

// Close marks the File closed: later calls of Sections, SectionData and
// LookupSymbol return an error. For a File made by Open it closes the
// file, which stays open meanwhile so that what is read once (headers)
// is read with pread(2) rather than through the mapping; it releases no
// memory (see the package documentation, "Lifetime"), so slices
// SectionData returned stay readable while the File is reachable. A
// second Close does nothing and returns nil.
func (f *File) Close() error {
	f.closed.Store(true)
	if f.data != nil {
		f.data.Close()
	}
	return nil
}

func (f *File) errClosed() error {
	if f.name == "" {
		return fmt.Errorf("object: %w", fs.ErrClosed)
	}
	return fmt.Errorf("object: %s: %w", f.name, fs.ErrClosed)
}

// Endian returns the byte order of the target.
func (f *File) Endian() binary.ByteOrder { return f.dec.Endian() }

// Sections returns the section headers; see [Object]. The caller may
// modify the returned slice.
func (f *File) Sections() ([]SectionHeader, error) {
	if f.closed.Load() {
		return nil, f.errClosed()
	}
	return slices.Clone(f.secs), nil
}

// SectionData returns the file bytes of section i; see [Object]. The result
// points into the file's memory: it must not be modified, and stays
// readable while f is reachable.
func (f *File) SectionData(i int) ([]byte, error) {
	if f.closed.Load() {
		return nil, f.errClosed()
	}
	return f.dec.SectionData(i)
}

// LookupSymbol returns the symbol called name from the file's symbol table
// (see the backend packages for which table and which symbols). The error
// wraps ErrNoSymbol when there is no such symbol or no symbol table, or
// when the table cannot be read (and then also a *FormatError). The
// returned Symbol stays valid after Close.
//
// The first few calls search the table where it is stored, comparing
// names in place, which allocates nothing: what opening a Go symbol table
// needs. Later calls read a map of the symbols, built once.
func (f *File) LookupSymbol(name string) (Symbol, error) {
	if f.closed.Load() {
		return Symbol{}, f.errClosed()
	}
	s, ok, err := f.dec.LookupSymbol(name)
	// The decoder reads f's memory, which is released once f is
	// unreachable: the caller may not use f after this call.
	runtime.KeepAlive(f)
	switch {
	case ok:
		return Symbol(s), nil
	case err != nil:
		return Symbol{}, fmt.Errorf("%w: %w", ErrNoSymbol, err)
	}
	return Symbol{}, ErrNoSymbol
}

// Symbols yields the symbols of the file's symbol table (see
// SymbolIterator, and the backend packages for which table and which
// symbols). After Close it yields one error wrapping fs.ErrClosed. The
// returned Symbols stay valid after Close.
func (f *File) Symbols() iter.Seq2[Symbol, error] {
	return func(yield func(Symbol, error) bool) {
		if f.closed.Load() {
			yield(Symbol{}, f.errClosed())
			return
		}
		it, ok := f.dec.(objfile.SymbolIterator)
		if !ok {
			return
		}
		// The decoder reads f's memory as the loop runs, and f must stay
		// reachable meanwhile: the caller may hold only the iterator.
		defer runtime.KeepAlive(f)
		for s, err := range it.Symbols() {
			if !yield(Symbol(s), err) {
				return
			}
		}
	}
}

// Format returns the file's format: "elf", "macho", "pe", "plan9",
// "xcoff" or "wasm".
func (f *File) Format() string { return f.dec.Format() }

// Arch returns the GOARCH name of the file's target ("amd64", "arm64",
// ...), or "" when the machine is unknown.
func (f *File) Arch() string { return f.dec.Arch() }
