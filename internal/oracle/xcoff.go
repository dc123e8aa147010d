package oracle

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// isXCOFF64 tells whether data starts with the magic of 64-bit XCOFF, the
// format the Go linker writes for GOOS=aix.
func isXCOFF64(data []byte) bool {
	return len(data) >= 24 && binary.BigEndian.Uint16(data) == 0x01f7
}

// xcoffTables reads a 64-bit XCOFF file as cmd/internal/objfile does
// (loadXCOFFTable, the standard library's internal/xcoff): the pclntab
// is the bytes between the symbols runtime.pclntab and runtime.epclntab,
// the text start the address of .text. It decodes the headers and the
// symbol table itself, from the format's definition (AIX's filehdr.h,
// scnhdr.h, syms.h), sharing no code with package xcoffobj.
func xcoffTables(data []byte) (text, symText uint64, symtab, pcln []byte, err error) {
	be := binary.BigEndian
	errBad := errors.New("oracle: XCOFF file too short for its headers")
	if !isXCOFF64(data) {
		return 0, 0, nil, nil, errors.New("oracle: not a 64-bit XCOFF file")
	}
	nscns := int(be.Uint16(data[2:]))
	symptr, nsyms := be.Uint64(data[8:]), uint64(be.Uint32(data[20:]))
	scnOff := 24 + int(be.Uint16(data[16:]))
	if scnOff+72*nscns > len(data) {
		return 0, 0, nil, nil, errBad
	}
	type section struct{ vaddr, size, off uint64 }
	secs := make([]section, nscns)
	for i := range secs {
		h := data[scnOff+72*i:]
		secs[i] = section{be.Uint64(h[16:]), be.Uint64(h[24:]), be.Uint64(h[32:])}
		if string(bytes.TrimRight(h[:8], "\x00")) == ".text" {
			text = secs[i].vaddr
		}
	}
	if symptr == 0 || symptr+nsyms*18+4 > uint64(len(data)) {
		return 0, 0, nil, nil, errors.New("oracle: XCOFF file without a symbol table")
	}
	strtab := data[symptr+nsyms*18:]
	// fileOffset returns where the symbol's bytes are in the file.
	found := map[string]uint64{}
	for i := uint64(0); i < nsyms; i++ {
		s := data[symptr+18*i:]
		naux := uint64(s[17])
		name := ""
		if off := be.Uint32(s[8:]); off >= 4 && uint64(off) < uint64(len(strtab)) {
			name = string(strtab[off : uint64(off)+uint64(bytes.IndexByte(strtab[off:], 0))])
		}
		scnum := int(int16(be.Uint16(s[12:])))
		i += naux
		switch name {
		case "runtime.pclntab", "runtime.epclntab", "runtime.text":
		default:
			continue
		}
		if _, ok := found[name]; ok || scnum <= 0 || scnum > nscns {
			continue
		}
		sec := secs[scnum-1]
		value := be.Uint64(s[0:])
		if name == "runtime.text" {
			symText = value
			continue
		}
		found[name] = sec.off + value - sec.vaddr
	}
	start, ok1 := found["runtime.pclntab"]
	end, ok2 := found["runtime.epclntab"]
	if !ok1 || !ok2 || end < start || end > uint64(len(data)) {
		return 0, 0, nil, nil, errors.New("oracle: no runtime.pclntab and runtime.epclntab symbols")
	}
	return text, symText, nil, data[start:end], nil
}
