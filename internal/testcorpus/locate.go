package testcorpus

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"debug/plan9obj"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Pclntab magics (read in the target's byte order).
const (
	Magic12  = 0xfffffffb // Go 1.2-1.15
	Magic116 = 0xfffffffa // Go 1.16-1.17
	Magic118 = 0xfffffff0 // Go 1.18-1.19
	Magic120 = 0xfffffff1 // Go 1.20+
)

// ExpectedMagic returns the pclntab magic written by Go 1.minor.
func ExpectedMagic(minor int) uint32 {
	switch {
	case minor >= 20:
		return Magic120
	case minor >= 18:
		return Magic118
	case minor >= 16:
		return Magic116
	default:
		return Magic12
	}
}

// PclntabHeader is the first 8 bytes of a pclntab, decoded.
type PclntabHeader struct {
	Magic     uint32
	BigEndian bool
	Quantum   int
	PtrSize   int
	// Offset is the table's file offset.
	Offset int64
	// FoundBy says how it was located.
	FoundBy string
}

// ByteOrder returns "big" or "little".
func (h PclntabHeader) ByteOrder() string {
	if h.BigEndian {
		return "big"
	}
	return "little"
}

// decodeHeader decodes 8 header bytes, or reports false.
func decodeHeader(b []byte) (PclntabHeader, bool) {
	if len(b) < 8 || b[4] != 0 || b[5] != 0 {
		return PclntabHeader{}, false
	}
	q, p := b[6], b[7]
	if (q != 1 && q != 2 && q != 4) || (p != 4 && p != 8) {
		return PclntabHeader{}, false
	}
	h := PclntabHeader{Quantum: int(q), PtrSize: int(p)}
	for _, big := range []bool{false, true} {
		var m uint32
		if big {
			m = binary.BigEndian.Uint32(b)
		} else {
			m = binary.LittleEndian.Uint32(b)
		}
		switch m {
		case Magic12, Magic116, Magic118, Magic120:
			h.Magic, h.BigEndian = m, big
			return h, true
		}
	}
	return PclntabHeader{}, false
}

// plausible checks the word after the header (the function count)
// to reject chance matches of the 8 header bytes.
func plausible(bin []byte, off int64, h PclntabHeader) bool {
	end := off + 8 + int64(h.PtrSize)
	if end > int64(len(bin)) {
		return false
	}
	w := bin[off+8 : end]
	var n uint64
	bo := binary.ByteOrder(binary.LittleEndian)
	if h.BigEndian {
		bo = binary.BigEndian
	}
	if h.PtrSize == 8 {
		n = bo.Uint64(w)
	} else {
		n = uint64(bo.Uint32(w))
	}
	return n > 0 && n < 1<<20
}

// FindPclntab locates the pclntab of an ELF, Mach-O, PE or Plan 9
// executable with the standard library only: through the
// runtime.pclntab symbol, else a pclntab section, else by scanning the
// file for a header followed by a plausible function count.
func FindPclntab(bin []byte) (PclntabHeader, error) {
	type cand struct {
		off int64
		how string
	}
	var cands []cand
	r := bytes.NewReader(bin)
	switch {
	case bytes.HasPrefix(bin, []byte("\x7fELF")):
		f, err := elf.NewFile(r)
		if err != nil {
			return PclntabHeader{}, err
		}
		if syms, err := f.Symbols(); err == nil {
			for _, s := range syms {
				if s.Name != "runtime.pclntab" && s.Name != "pclntab" {
					continue
				}
				for _, sec := range f.Sections {
					if sec.Type != elf.SHT_NOBITS && sec.Addr <= s.Value && s.Value < sec.Addr+sec.Size {
						cands = append(cands, cand{int64(sec.Offset + s.Value - sec.Addr), "symbol " + s.Name})
					}
				}
			}
		}
		for _, name := range []string{".gopclntab", ".data.rel.ro.gopclntab"} {
			if sec := f.Section(name); sec != nil && sec.Type != elf.SHT_NOBITS {
				cands = append(cands, cand{int64(sec.Offset), "section " + name})
			}
		}
	case isMachO(bin):
		f, err := macho.NewFile(r)
		if err != nil {
			return PclntabHeader{}, err
		}
		if f.Symtab != nil {
			for _, s := range f.Symtab.Syms {
				if s.Name != "runtime.pclntab" {
					continue
				}
				for _, sec := range f.Sections {
					if sec.Offset != 0 && sec.Addr <= s.Value && s.Value < sec.Addr+sec.Size {
						cands = append(cands, cand{int64(uint64(sec.Offset) + s.Value - sec.Addr), "symbol " + s.Name})
					}
				}
			}
		}
		if sec := f.Section("__gopclntab"); sec != nil {
			cands = append(cands, cand{int64(sec.Offset), "section __gopclntab"})
		}
	case bytes.HasPrefix(bin, []byte("MZ")):
		f, err := pe.NewFile(r)
		if err != nil {
			return PclntabHeader{}, err
		}
		for _, s := range f.Symbols {
			if s.Name != "runtime.pclntab" || s.SectionNumber <= 0 || int(s.SectionNumber) > len(f.Sections) {
				continue
			}
			sec := f.Sections[s.SectionNumber-1]
			cands = append(cands, cand{int64(sec.Offset) + int64(s.Value), "symbol " + s.Name})
		}
	case Format(bin) == "xcoff":
		// Found by the scan below.
	default:
		if _, err := plan9obj.NewFile(r); err != nil {
			return PclntabHeader{}, errors.New("testcorpus: unknown executable format")
		}
	}
	for _, c := range cands {
		if c.off < 0 || c.off+8 > int64(len(bin)) {
			continue
		}
		if h, ok := decodeHeader(bin[c.off:]); ok && plausible(bin, c.off, h) {
			h.Offset, h.FoundBy = c.off, c.how
			return h, nil
		}
	}
	// Scan. Candidates are 4-aligned in every format and release.
	var found []PclntabHeader
	for off := 0; off+16 <= len(bin); off += 4 {
		if bin[off+4] != 0 || bin[off+5] != 0 || (bin[off] != 0xff && bin[off+3] != 0xff) {
			continue
		}
		if h, ok := decodeHeader(bin[off:]); ok && plausible(bin, int64(off), h) {
			h.Offset, h.FoundBy = int64(off), "scan"
			found = append(found, h)
		}
	}
	switch len(found) {
	case 0:
		return PclntabHeader{}, errors.New("testcorpus: no pclntab found")
	case 1:
		return found[0], nil
	}
	var offs []string
	for _, h := range found {
		offs = append(offs, fmt.Sprintf("%#x", h.Offset))
	}
	return PclntabHeader{}, fmt.Errorf("testcorpus: %d pclntab candidates (%s)", len(found), strings.Join(offs, " "))
}

func isMachO(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	m := binary.LittleEndian.Uint32(b)
	return m == macho.Magic32 || m == macho.Magic64 || binary.BigEndian.Uint32(b) == macho.Magic32 || binary.BigEndian.Uint32(b) == macho.Magic64
}

// Format returns "elf", "macho", "pe", "plan9", "xcoff" or "".
func Format(bin []byte) string {
	switch {
	case len(bin) >= 24 && binary.BigEndian.Uint16(bin) == 0x01f7:
		return "xcoff"
	case bytes.HasPrefix(bin, []byte("\x7fELF")):
		return "elf"
	case isMachO(bin):
		return "macho"
	case bytes.HasPrefix(bin, []byte("MZ")):
		return "pe"
	}
	if _, err := plan9obj.NewFile(bytes.NewReader(bin)); err == nil {
		return "plan9"
	}
	return ""
}

// HasDWARF tells whether the binary has DWARF sections (compressed or
// not) and whether it has a symbol table.
func HasDWARF(bin []byte) (dwarf, symbols bool) {
	r := bytes.NewReader(bin)
	isDebug := func(name string) bool {
		return strings.HasPrefix(name, ".debug_") || strings.HasPrefix(name, ".zdebug_") ||
			strings.HasPrefix(name, "__debug_") || strings.HasPrefix(name, "__zdebug_")
	}
	switch Format(bin) {
	case "elf":
		f, err := elf.NewFile(r)
		if err != nil {
			return false, false
		}
		for _, s := range f.Sections {
			if isDebug(s.Name) {
				dwarf = true
			}
		}
		syms, _ := f.Symbols()
		return dwarf, len(syms) > 0
	case "macho":
		f, err := macho.NewFile(r)
		if err != nil {
			return false, false
		}
		for _, s := range f.Sections {
			if isDebug(s.Name) {
				dwarf = true
			}
		}
		return dwarf, f.Symtab != nil && len(f.Symtab.Syms) > 0
	case "pe":
		f, err := pe.NewFile(r)
		if err != nil {
			return false, false
		}
		for _, s := range f.Sections {
			if isDebug(s.Name) {
				dwarf = true
			}
		}
		return dwarf, len(f.Symbols) > 0
	case "plan9":
		f, err := plan9obj.NewFile(r)
		if err != nil {
			return false, false
		}
		syms, _ := f.Symbols()
		return false, len(syms) > 0
	case "xcoff":
		// debug/dwarf has no XCOFF reader: the DWARF oracle does not
		// apply. Symbols: the header's symbol count.
		return false, binary.BigEndian.Uint32(bin[20:]) > 0
	}
	return false, false
}
