package objfile

import (
	"fmt"
	"io"
	"math"
	"slices"
)

// SectionTable is a backend's list of sections and the way to read their
// bytes: subslices of the file's bytes for files made by NewBytes, or
// per-section readers for files adapted from the standard library's types.
type SectionTable struct {
	Format  string          // the format's name, as Decoder.Format returns it
	Headers []SectionHeader // what Sections returns
	Data    []byte          // the file's bytes; nil when Read is used
	Base    uint64          // file offset of Data[0] (a slice of a fat file)
	Read    []io.ReaderAt   // per-section readers; a nil entry cannot be read
	// NoReader explains why a section without a reader cannot be read.
	NoReader string
}

// Sections returns a copy of the headers.
func (t *SectionTable) Sections() ([]SectionHeader, error) {
	return slices.Clone(t.Headers), nil
}

// SectionData returns the FileSize bytes of section i: a subslice of Data,
// which must not be modified, or a copy read through Read[i]. A section
// that claims bytes beyond the file is an error, and no allocation is sized
// by a header field.
func (t *SectionTable) SectionData(i int) ([]byte, error) {
	if i < 0 || i >= len(t.Headers) {
		return nil, fmt.Errorf("%sobj: section index %d out of range [0,%d)", t.Format, i, len(t.Headers))
	}
	h := &t.Headers[i]
	if h.FileSize == 0 {
		return []byte{}, nil
	}
	if t.Read == nil {
		off := h.Offset - t.Base
		if h.Offset < t.Base || off > uint64(len(t.Data)) || h.FileSize > uint64(len(t.Data))-off {
			return nil, FormatErrorf(t.Format, int64(min(h.Offset, math.MaxInt64)), "section %d (%q) of %#x bytes extends beyond the file",
				i, h.Name, h.FileSize)
		}
		return t.Data[off : off+h.FileSize : off+h.FileSize], nil
	}
	r := t.Read[i]
	if r == nil {
		return nil, fmt.Errorf("%sobj: section %d (%q) %s", t.Format, i, h.Name, t.NoReader)
	}
	// ReadAll grows with the bytes actually read, so a size larger than
	// the file cannot cause a large allocation.
	b, err := io.ReadAll(io.NewSectionReader(r, 0, int64(min(h.FileSize, 1<<62))))
	if err == nil && uint64(len(b)) != h.FileSize {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("%sobj: section %d (%q): %w", t.Format, i, h.Name, err)
	}
	return b, nil
}
