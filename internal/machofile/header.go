package machofile

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// Sizes of the Mach-O structures this file decodes.
const (
	header32Size  = 28
	header64Size  = 32
	segment32Size = 56
	segment64Size = 72
	section32Size = 68
	section64Size = 80
	symtabSize    = 24
	nlist32Size   = 12
	nlist64Size   = 16
)

// Magic numbers of universal files. (macho.MagicFat is the 32-bit one.)
const (
	magicFat64 = 0xcafebabf
)

// symtabCmd is an LC_SYMTAB command; offsets are relative to the Mach-O file.
type symtabCmd struct {
	symoff, nsyms, stroff, strsize uint64
}

// formatError reports damage in the file; see objfile.FormatErrorf.
func formatError(format string, args ...any) error {
	return objfile.FormatErrorf("macho", -1, format, args...)
}

// ErrFat is returned by NewBytes for a universal file, which NewFat decodes.
var ErrFat = errors.New("machoobj: universal (fat) file; use NewFat")

// NewBytes decodes the thin Mach-O file in data. The result is a *File
// whose SectionData returns subslices of data, which must not be modified
// while the File is in use. Only the header and load commands are read;
// symbols are read on the first call to LookupSymbol. For a universal file
// NewBytes returns ErrFat.
func NewBytes(data []byte) (*File, error) {
	if len(data) >= 4 {
		switch binary.BigEndian.Uint32(data) {
		case macho.MagicFat, magicFat64:
			return nil, ErrFat
		}
	}
	f, err := decode(data, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// NewFat decodes the universal ("fat") Mach-O file in data, returning one
// File per architecture, in the order of the file's table. Each File's
// SectionData returns subslices of data, and its section offsets are
// offsets in data (not in the architecture's image). Both the 32-bit
// (0xcafebabe) and 64-bit (0xcafebabf) tables are understood.
func NewFat(data []byte) ([]*File, error) {
	be := binary.BigEndian
	if len(data) < 8 {
		return nil, formatError("not a universal file")
	}
	entsize := uint64(20)
	switch be.Uint32(data) {
	case macho.MagicFat:
	case magicFat64:
		entsize = 32
	default:
		return nil, formatError("not a universal file")
	}
	n := uint64(be.Uint32(data[4:]))
	if n == 0 {
		return nil, formatError("universal file with no architectures")
	}
	if n > (uint64(len(data))-8)/entsize {
		return nil, formatError("universal file: %d architectures do not fit in the file", n)
	}
	files := make([]*File, n)
	for i := range files {
		e := data[8+uint64(i)*entsize:]
		// cputype, cpusubtype, offset, size, align (offset and size are
		// 8 bytes in the 64-bit table).
		var off, size uint64
		if entsize == 32 {
			off, size = be.Uint64(e[8:]), be.Uint64(e[16:])
		} else {
			off, size = uint64(be.Uint32(e[8:])), uint64(be.Uint32(e[12:]))
		}
		if off > uint64(len(data)) || size > uint64(len(data))-off {
			return nil, formatError("universal file: architecture %d at %#x size %#x extends beyond the file (%#x bytes)", i, off, size, len(data))
		}
		f, err := decode(data[off:off+size], off)
		if err != nil {
			return nil, fmt.Errorf("architecture %d: %w", i, err)
		}
		if cpu := macho.Cpu(be.Uint32(e)); f.cpu != cpu {
			return nil, formatError("universal file: architecture %d is %v but its image is %v", i, cpu, f.cpu)
		}
		files[i] = f
	}
	return files, nil
}

// decode parses the headers of the Mach-O file in data, which starts at
// offset base of the file given to NewBytes or NewFat.
func decode(data []byte, base uint64) (*File, error) {
	if len(data) < 4 {
		return nil, formatError("not a Mach-O file")
	}
	f := &File{data: data, base: base, secs: objfile.SectionTable{Format: "macho", Data: data, Base: base}}
	be, le := binary.BigEndian.Uint32(data), binary.LittleEndian.Uint32(data)
	switch {
	case be == macho.Magic32 || be == macho.Magic64:
		f.order, f.is64 = binary.BigEndian, be == macho.Magic64
	case le == macho.Magic32 || le == macho.Magic64:
		f.order, f.is64 = binary.LittleEndian, le == macho.Magic64
	default:
		return nil, formatError("not a Mach-O file")
	}
	is64 := f.is64
	o := f.order
	hdrSize, segSize, sectSize := uint64(header32Size), uint64(segment32Size), uint64(section32Size)
	if is64 {
		hdrSize, segSize, sectSize = header64Size, segment64Size, section64Size
	}
	if uint64(len(data)) < hdrSize {
		return nil, formatError("header truncated")
	}
	f.cpu = macho.Cpu(o.Uint32(data[4:]))
	ncmds := o.Uint32(data[16:])
	sizeofcmds := uint64(o.Uint32(data[20:]))
	if sizeofcmds > uint64(len(data))-hdrSize {
		return nil, formatError("load commands (%#x bytes) extend beyond the file (%#x bytes)", sizeofcmds, len(data))
	}
	cmds := data[hdrSize : hdrSize+sizeofcmds]
	for i := uint32(0); i < ncmds; i++ {
		if len(cmds) < 8 {
			return nil, formatError("load command %d truncated", i)
		}
		cmd, size := macho.LoadCmd(o.Uint32(cmds)), uint64(o.Uint32(cmds[4:]))
		if size < 8 || size > uint64(len(cmds)) {
			return nil, formatError("load command %d has size %d", i, size)
		}
		c := cmds[:size]
		cmds = cmds[size:]
		switch {
		case cmd == macho.LoadCmdSegment && !is64, cmd == macho.LoadCmdSegment64 && is64:
			if size < segSize {
				return nil, formatError("load command %d: segment command of %d bytes", i, size)
			}
			var seg segment
			var nsects uint64
			if is64 {
				seg.initprot, nsects, seg.flags = o.Uint32(c[60:]), uint64(o.Uint32(c[64:])), o.Uint32(c[68:])
			} else {
				seg.initprot, nsects, seg.flags = o.Uint32(c[44:]), uint64(o.Uint32(c[48:])), o.Uint32(c[52:])
			}
			if nsects > (size-segSize)/sectSize {
				return nil, formatError("load command %d: %d sections do not fit in %d bytes", i, nsects, size)
			}
			for j := range nsects {
				f.secs.Headers = append(f.secs.Headers, f.section(c[segSize+j*sectSize:], is64, seg))
			}
		case cmd == macho.LoadCmdSymtab:
			if size < symtabSize {
				return nil, formatError("load command %d: symtab command of %d bytes", i, size)
			}
			f.symtab = &symtabCmd{
				symoff:  uint64(o.Uint32(c[8:])),
				nsyms:   uint64(o.Uint32(c[12:])),
				stroff:  uint64(o.Uint32(c[16:])),
				strsize: uint64(o.Uint32(c[20:])),
			}
		}
	}
	return f, nil
}

// section decodes the section header at the start of b.
func (f *File) section(b []byte, is64 bool, seg segment) objfile.SectionHeader {
	o := f.order
	name := cstring(b[:16])
	var addr, size uint64
	var off, flags uint32
	if is64 {
		addr, size, off, flags = o.Uint64(b[32:]), o.Uint64(b[40:]), o.Uint32(b[48:]), o.Uint32(b[64:])
	} else {
		addr, size, off, flags = uint64(o.Uint32(b[32:])), uint64(o.Uint32(b[36:])), o.Uint32(b[40:]), o.Uint32(b[56:])
	}
	return sectionHeader(name, seg, addr, size, f.base+uint64(off), flags)
}

// cstring returns b up to its first NUL.
func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
