// Package plan9file decodes Plan 9 a.out files for package object and package
// plan9obj, which document what it presents (see objfile.Decoder).
package plan9file

import (
	"encoding/binary"
	"io"

	p9 "debug/plan9obj"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// File is a Plan 9 a.out file decoded for package object: an [objfile.Decoder]. A File is
// safe for concurrent use.
type File struct {
	magic uint32
	secs  objfile.SectionTable

	// A File made by NewBytes reads data; one made by New reads pf.
	data []byte
	pf   *p9.File
	syms objfile.SymbolMap
}

// Indexes of the sections.
const (
	textSect = iota
	dataSect
	bssSect
	symsSect
	spszSect
	pcszSect
	numSect
)

var sectNames = [numSect]string{"text", "data", "bss", "syms", "spsz", "pcsz"}

// target describes what the header does not say about a machine.
type target struct {
	arch     string
	loadAddr uint64 // where the file is mapped; also the data alignment
}

var targets = map[uint32]target{
	p9.Magic386:   {"386", 0x1000},
	p9.MagicAMD64: {"amd64", 0x200000},
	p9.MagicARM:   {"arm", 0x1000},
}

// hdrSize returns the size of the header of a file with magic.
func hdrSize(magic uint32) uint64 {
	if magic&p9.Magic64 != 0 {
		return 40 // the entry point is repeated as 8 bytes
	}
	return 32
}

// layout computes the sections of a file with magic and the given sizes of
// text, data, bss, syms, spsz and pcsz.
func layout(magic uint32, sizes [numSect]uint64) []objfile.SectionHeader {
	t := targets[magic]
	hs := make([]objfile.SectionHeader, numSect)
	off := hdrSize(magic)
	for i := range hs {
		hs[i] = objfile.SectionHeader{Name: sectNames[i], Size: sizes[i], Offset: off}
		if i != bssSect {
			hs[i].FileSize = sizes[i]
			off += sizes[i]
		}
	}
	text, data, bss := &hs[textSect], &hs[dataSect], &hs[bssSect]
	text.Addr = t.loadAddr + hdrSize(magic)
	data.Addr = (text.Addr + text.Size + t.loadAddr - 1) &^ (t.loadAddr - 1)
	bss.Addr = data.Addr + data.Size
	text.Flags = objfile.SectionAlloc | objfile.SectionExec
	data.Flags = objfile.SectionAlloc | objfile.SectionWrite
	bss.Flags = objfile.SectionAlloc | objfile.SectionWrite
	return hs
}

// New returns f as an Object. The result is a *File; its SectionData reads
// and copies the section's bytes.
func New(f *p9.File) *File {
	ff := &File{magic: f.Magic, pf: f,
		secs: objfile.SectionTable{Format: "plan9", Read: make([]io.ReaderAt, numSect), NoReader: "is missing"}}
	var sizes [numSect]uint64
	sizes[bssSect] = uint64(f.Bss)
	for i, name := range sectNames {
		if s := f.Section(name); s != nil {
			sizes[i] = uint64(s.Size)
			ff.secs.Read[i] = s.ReaderAt
		}
	}
	ff.secs.Headers = layout(f.Magic, sizes)
	return ff
}

// NewBytes decodes the Plan 9 a.out file in data. The result is a *File
// whose SectionData returns subslices of data, which must not be modified
// while the File is in use. Only the header is read; symbols are read on
// the first call to LookupSymbol.
func NewBytes(data []byte) (*File, error) {
	if len(data) < 4 {
		return nil, formatError("not a Plan 9 a.out file")
	}
	magic := binary.BigEndian.Uint32(data)
	if _, ok := targets[magic]; !ok {
		return nil, formatError("unknown magic %#x", magic)
	}
	if uint64(len(data)) < hdrSize(magic) {
		return nil, formatError("header truncated")
	}
	// The header is eight big-endian words: magic, text, data, bss,
	// syms, entry, spsz, pcsz.
	word := func(i int) uint64 { return uint64(binary.BigEndian.Uint32(data[4*i:])) }
	sizes := [numSect]uint64{word(1), word(2), word(3), word(4), word(6), word(7)}
	secs := objfile.SectionTable{Format: "plan9", Headers: layout(magic, sizes), Data: data}
	return &File{magic: magic, data: data, secs: secs}, nil
}

// Endian returns the byte order of the target: little-endian for every
// machine Go targets on Plan 9 (the a.out header and symbol table are
// big-endian whatever the target).
func (f *File) Endian() binary.ByteOrder { return binary.LittleEndian }

// Sections returns the sections text, data, bss, syms, spsz and pcsz, in
// this order. The caller may modify the returned slice.
func (f *File) Sections() ([]objfile.SectionHeader, error) { return f.secs.Sections() }

// SectionData returns the FileSize bytes of section i. For a File made by
// NewBytes the result aliases the bytes given to NewBytes and must not be
// modified.
func (f *File) SectionData(i int) ([]byte, error) { return f.secs.SectionData(i) }

// Format returns "plan9".
func (f *File) Format() string { return "plan9" }

// Arch returns the GOARCH name of the target: "386", "amd64" or "arm".
func (f *File) Arch() string { return targets[f.magic].arch }

// formatError reports damage in the file; see objfile.FormatErrorf.
func formatError(format string, args ...any) error {
	return objfile.FormatErrorf("plan9", -1, format, args...)
}
