package object

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"sync"

	"github.com/gosym-dev/gosym/internal/mmapfile"
)

// File is an object file opened by Open. It implements [Object],
// [io.Closer], [SymbolLookup] and [Describer] by forwarding to the backend
// that decodes its format. A File is safe for concurrent use.
//
// The slices SectionData returns point into the file's memory mapping:
// they must not be modified, and must not be used after Close. After
// Close, Sections, SectionData and LookupSymbol return an error wrapping
// [fs.ErrClosed]; Endian, Format and Arch keep answering.
type File struct {
	name   string
	order  binary.ByteOrder
	format string
	arch   string

	mu     sync.RWMutex // held for writing by Close, for reading by the others
	obj    Object       // nil once closed
	data   []byte       // the file's contents; nil once closed
	unmap  func() error // releases data; nil if it was read, not mapped
	closed bool
}

// Open opens the named file and detects its format as NewBytes does. The
// file is mapped into memory read-only where the operating system allows
// (on Unix systems), and read into memory elsewhere; Close releases it. As
// with any mapping, a file truncated by another program while it is open
// makes reading its sections fault.
//
// If the format is unknown, the error wraps ErrUnknownFormat.
func Open(name string) (*File, error) {
	data, unmap, err := mmapfile.Load(name)
	if err != nil {
		return nil, err
	}
	obj, err := NewBytes(data)
	if err != nil {
		if unmap != nil {
			unmap()
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f := &File{name: name, obj: obj, data: data, unmap: unmap, order: obj.Endian()}
	if d, ok := obj.(Describer); ok {
		f.format, f.arch = d.Format(), d.Arch()
	}
	return f, nil
}

// Close releases the file's memory. The slices SectionData returned must
// not be used afterwards. Closing a closed File returns an error wrapping
// fs.ErrClosed.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return f.errClosed()
	}
	f.closed = true
	f.obj, f.data = nil, nil
	if f.unmap != nil {
		if err := f.unmap(); err != nil {
			return &fs.PathError{Op: "close", Path: f.name, Err: err}
		}
	}
	return nil
}

func (f *File) errClosed() error {
	return fmt.Errorf("object: %s: %w", f.name, fs.ErrClosed)
}

// Endian returns the byte order of the target.
func (f *File) Endian() binary.ByteOrder { return f.order }

// Sections returns the section headers; see [Object].
func (f *File) Sections() ([]SectionHeader, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return nil, f.errClosed()
	}
	return f.obj.Sections()
}

// SectionData returns the file bytes of section i; see [Object]. The result
// points into the file's memory and is valid until Close.
func (f *File) SectionData(i int) ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return nil, f.errClosed()
	}
	return f.obj.SectionData(i)
}

// LookupSymbol returns the symbol called name from the file's symbol table
// (see the backend packages for which table and which symbols). The error
// wraps ErrNoSymbol when there is no such symbol or no symbol table. The
// returned Symbol stays valid after Close.
func (f *File) LookupSymbol(name string) (Symbol, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return Symbol{}, f.errClosed()
	}
	if l, ok := f.obj.(SymbolLookup); ok {
		return l.LookupSymbol(name)
	}
	return Symbol{}, ErrNoSymbol
}

// Format returns the file's format: "elf", "macho", "pe" or "plan9".
func (f *File) Format() string { return f.format }

// Arch returns the GOARCH name of the file's target ("amd64", "arm64",
// ...), or "" when the machine is unknown.
func (f *File) Arch() string { return f.arch }
