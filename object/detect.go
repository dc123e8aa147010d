package object

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/gosym-dev/gosym/internal/elffile"
	"github.com/gosym-dev/gosym/internal/machofile"
	"github.com/gosym-dev/gosym/internal/objfile"
	"github.com/gosym-dev/gosym/internal/pefile"
	"github.com/gosym-dev/gosym/internal/plan9file"
	"github.com/gosym-dev/gosym/internal/wasmfile"
	"github.com/gosym-dev/gosym/internal/xcofffile"
)

// ErrUnknownFormat is returned, wrapped, by Open and NewBytes for data in
// none of the formats they know. The message names the magic number found
// and the formats known: "object: unknown format (magic 00 01 02 03; reads
// ELF, Mach-O, PE, Plan 9, XCOFF and WebAssembly)".
var ErrUnknownFormat = errors.New("unknown format")

// formats names the formats NewBytes reads, for messages.
const formats = "ELF, Mach-O, PE, Plan 9, XCOFF and WebAssembly"

// Magic numbers, read big-endian from the first four bytes.
const (
	magicELF        = 0x7f454c46 // "\x7fELF"
	magicMachO32    = 0xfeedface
	magicMachO64    = 0xfeedfacf
	magicMachO32LE  = 0xcefaedfe
	magicMachO64LE  = 0xcffaedfe
	magicFat        = 0xcafebabe
	magicFat64      = 0xcafebabf
	magicPlan9386   = 0x000001eb
	magicPlan9AMD64 = 0x00008a97
	magicPlan9ARM   = 0x00000647
	magicWasm       = 0x0061736d // "\x00asm"
)

// maxFatArches bounds the architecture count of a plausible universal
// file: Java class files share its magic, and their version makes the
// count 45 or more.
const maxFatArches = 20

// NewBytes detects the format of the executable or object file in data
// (ELF; Mach-O, thin in either byte order and word size, or universal; PE;
// Plan 9 a.out; XCOFF, 32- or 64-bit; WebAssembly module) by its magic
// number, and decodes it as the matching backend package does: elfobj,
// machoobj, peobj, plan9obj, xcoffobj or wasmobj. No data is copied
// (but for the linear memory of a WebAssembly module, see wasmobj):
// section data are subslices of data, which must not be modified while the
// Object is in use. The result is a *File.
//
// Of a universal Mach-O file, NewBytes returns the architecture matching
// runtime.GOARCH if there is one, else the first. Use machoobj.NewFat for
// the others.
//
// If the format is unknown, the error wraps ErrUnknownFormat.
func NewBytes(data []byte) (Object, error) {
	f, err := newBytes(data, nil)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// newBytes is NewBytes with a concrete result. If r is not nil, it reads
// the bytes of data at the same offsets, and the headers of an ELF file
// are read through it (see elffile.NewBytesAt).
func newBytes(data []byte, r io.ReaderAt) (*File, error) {
	d, err := decode(data, r)
	if err != nil {
		return nil, err
	}
	return newFile(d), nil
}

// decode picks the decoder for data by its magic number, read through r
// if it is not nil.
func decode(data []byte, r io.ReaderAt) (objfile.Decoder, error) {
	if len(data) < 4 {
		return nil, unknownFormat(data)
	}
	var head [4]byte
	if r == nil {
		copy(head[:], data)
	} else if n, _ := r.ReadAt(head[:], 0); n < len(head) {
		copy(head[:], data)
	}
	switch magic := binary.BigEndian.Uint32(head[:]); magic {
	case magicELF:
		return wrapNil(elffile.NewBytesAt(data, r))
	case magicMachO32, magicMachO64, magicMachO32LE, magicMachO64LE:
		return wrapNil(machofile.NewBytes(data))
	case magicFat, magicFat64:
		files, err := machofile.NewFat(data)
		if err != nil {
			if len(data) >= 8 && binary.BigEndian.Uint32(data[4:]) >= maxFatArches {
				return nil, unknownFormat(data)
			}
			return nil, err
		}
		return pickArch(files, runtime.GOARCH), nil
	case magicPlan9386, magicPlan9AMD64, magicPlan9ARM:
		return wrapNil(plan9file.NewBytes(data))
	case magicWasm:
		return wrapNil(wasmfile.NewBytes(data))
	}
	switch binary.BigEndian.Uint16(head[:]) {
	case xcofffile.Magic32, xcofffile.Magic64:
		return wrapNil(xcofffile.NewBytes(data))
	}
	if head[0] == 'M' && head[1] == 'Z' {
		return wrapNil(pefile.NewBytes(data))
	}
	return nil, unknownFormat(data)
}

// wrapNil returns a decoder's result as a Decoder, keeping a nil pointer
// from becoming a non-nil interface.
func wrapNil[D objfile.Decoder](d D, err error) (objfile.Decoder, error) {
	if err != nil {
		return nil, err
	}
	return d, nil
}

// pickArch returns the file for goarch, or else the first.
func pickArch(files []*machofile.File, goarch string) *machofile.File {
	for _, f := range files {
		if f.Arch() == goarch {
			return f
		}
	}
	return files[0]
}

// unknownFormat returns the error for data in no known format, quoting
// its first four bytes (fewer if there are fewer).
func unknownFormat(data []byte) error {
	if len(data) == 0 {
		return fmt.Errorf("object: %w (empty file; reads %s)", ErrUnknownFormat, formats)
	}
	return fmt.Errorf("object: %w (magic % x; reads %s)", ErrUnknownFormat, data[:min(len(data), 4)], formats)
}
