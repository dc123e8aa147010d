package object

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"slices"
	"sync"

	"github.com/gosym-dev/gosym/internal/mmapfile"
	"github.com/gosym-dev/gosym/internal/objfile"
)

func init() {
	objfile.NewObject = func(d objfile.Decoder) any { return newFile(d) }
}

// File is an object file of any format: opened by Open, or made from bytes
// by NewBytes or by a backend package (elfobj, machoobj, peobj,
// plan9obj). It implements [Object], [io.Closer], [SymbolLookup] and
// [Describer]. A File is safe for concurrent use.
//
// The slices SectionData returns point into the file's memory (for a File
// made by Open, its memory mapping): they must not be modified, and must
// not be used after Close. After Close, Sections, SectionData and
// LookupSymbol return an error wrapping [fs.ErrClosed]; Endian, Format and
// Arch keep answering.
type File struct {
	dec  objfile.Decoder
	secs []SectionHeader // dec's headers, converted once
	name string          // the name given to Open; "" for other Files

	mu     sync.RWMutex // held for writing by Close, for reading by the others
	data   []byte       // the file's contents (Open); nil once closed
	unmap  func() error // releases data; nil if it was read, not mapped
	closed bool
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
	f, err := newBytes(data)
	if err != nil {
		if unmap != nil {
			unmap()
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f.name, f.data, f.unmap = name, data, unmap
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
	f.data = nil
	if f.unmap != nil {
		if err := f.unmap(); err != nil {
			return &fs.PathError{Op: "close", Path: f.name, Err: err}
		}
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
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return nil, f.errClosed()
	}
	return slices.Clone(f.secs), nil
}

// SectionData returns the file bytes of section i; see [Object]. The result
// points into the file's memory and is valid until Close.
func (f *File) SectionData(i int) ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return nil, f.errClosed()
	}
	return f.dec.SectionData(i)
}

// LookupSymbol returns the symbol called name from the file's symbol table
// (see the backend packages for which table and which symbols). The error
// wraps ErrNoSymbol when there is no such symbol or no symbol table, or
// when the table cannot be read. The returned Symbol stays valid after
// Close.
func (f *File) LookupSymbol(name string) (Symbol, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return Symbol{}, f.errClosed()
	}
	s, ok, err := f.dec.LookupSymbol(name)
	switch {
	case ok:
		return Symbol(s), nil
	case err != nil:
		return Symbol{}, fmt.Errorf("%w: %w", ErrNoSymbol, err)
	}
	return Symbol{}, ErrNoSymbol
}

// Format returns the file's format: "elf", "macho", "pe" or "plan9".
func (f *File) Format() string { return f.dec.Format() }

// Arch returns the GOARCH name of the file's target ("amd64", "arm64",
// ...), or "" when the machine is unknown.
func (f *File) Arch() string { return f.dec.Arch() }
