package gosym

import (
	"encoding/binary"
	"fmt"
)

// magic is the first word of a pclntab; it fixes the family of layouts.
type magic uint32

const (
	magic12  magic = 0xfffffffb // Go 1.2 – 1.15
	magic116 magic = 0xfffffffa // Go 1.16 – 1.17
	magic118 magic = 0xfffffff0 // Go 1.18 – 1.19
	magic120 magic = 0xfffffff1 // Go 1.20 and later
)

// header is a decoded pcHeader, with the sub-tables it locates already cut
// out of the table's bytes. Offsets stored in _func records and pc-value
// references index these slices directly, whatever the version:
//
//	names   name offsets (funcnametab; the whole table before 1.16)
//	pctab   pc-value table offsets (pctab; the whole table before 1.16)
//	funcs   funcoff values (functab start; the whole table before 1.16)
//	functab the lookup array, nfunc entries and the sentinel
type header struct {
	magic  magic // the layout family; see stored for the word itself
	stored uint32
	rd     reader
	// words is the number of header words after the first eight bytes: 1
	// (Go 1.2), 7 (1.16, and a 1.18+ header without textStart), 8 (1.18+).
	words     int
	quantum   uint32
	nfunc     uint64
	nfiles    uint64 // 1.16+
	textStart uint64 // header word of 1.18–1.25; 0 otherwise
	// entryKey is garble's key: a 1.18+ record stores its entry offset
	// XORed with its name offset times entryKey. 0 for the Go linker's
	// tables (validate.go).
	entryKey uint32
	// funcIDBeyond is the largest funcID above the release's wrapper
	// funcID seen in the records sampled at open; 0 if none (validate.go).
	funcIDBeyond uint8

	names, pctab, funcs, functab []byte
	cutab                        []byte // 1.16+: u32 filetab offsets per compilation unit
	filetab                      []byte // 1.16+: NUL-terminated paths; before: u32 count, u32 offsets
}

// entrySize returns the size of one functab entry.
func (h *header) entrySize() uint64 {
	if h.magic >= magic118 && h.magic <= magic120 {
		return 8
	}
	return 2 * uint64(h.rd.ptrSize)
}

// Unknown magics. garble (mvdan.cc/garble) writes a random first word
// and leaves the rest of a Go 1.20-family header as the linker wrote it;
// a release may drop the header's dead textStart word. Such a header is
// read as the Go 1.20 layout when its structure says so: the rest of the
// first eight bytes is a Go header's (two zero bytes, a quantum of 1, 2 or
// 4, a pointer size of 4 or 8), the function name table starts right
// after the header, as the linker places it, and every offset is in order
// and in range. The functab and the records are checked afterwards
// (plausibleTable, Table.repair).

// magicless reports whether data starts like a pclntab header apart from
// its magic, and returns the reader the header's fields say.
func magicless(data []byte) (reader, bool) {
	if len(data) < 8 || data[4] != 0 || data[5] != 0 {
		return reader{}, false
	}
	switch data[6] {
	case 1, 2, 4:
	default:
		return reader{}, false
	}
	if data[7] != 4 && data[7] != 8 {
		return reader{}, false
	}
	return reader{ptrSize: int(data[7])}, true
}

// headerShape reports whether data could start a Go 1.20-layout header
// of eight or seven words, in either byte order, by the arithmetic of
// parseKnownHeader alone: it allocates nothing, and its first test (the
// function name table starts right after the header) rejects nearly
// every position, so that a scan may ask it at every candidate.
func headerShape(data []byte) bool {
	rd, ok := magicless(data)
	if !ok {
		return false
	}
	p, size := uint64(rd.ptrSize), uint64(len(data))
	for n := uint64(8); n >= 7; n-- {
		i := n - 5 // the word holding the function name table's offset
		if size < 8+n*p {
			continue
		}
		for _, be := range [2]bool{false, true} {
			rd.bigEndian = be
			if rd.ptr(data[8+i*p:]) != 8+n*p {
				continue
			}
			w := func(k uint64) uint64 { return rd.ptr(data[8+k*p:]) }
			if w(0) != 0 && w(i) <= w(i+1) && w(i+1) <= w(i+2) &&
				w(i+2) <= w(i+3) && w(i+3) <= w(i+4) && w(i+4) <= size {
				return true
			}
		}
	}
	return false
}

// parseMagic checks the first eight bytes of a pclntab (FORMAT.md, "Header") and returns
// its magic and reader.
func parseMagic(data []byte) (magic, reader, bool) {
	if len(data) < 8 || data[4] != 0 || data[5] != 0 {
		return 0, reader{}, false
	}
	switch data[6] {
	case 1, 2, 4:
	default:
		return 0, reader{}, false
	}
	ptrSize := int(data[7])
	if ptrSize != 4 && ptrSize != 8 {
		return 0, reader{}, false
	}
	for _, be := range []bool{false, true} {
		var m magic
		if be {
			m = magic(binary.BigEndian.Uint32(data))
		} else {
			m = magic(binary.LittleEndian.Uint32(data))
		}
		switch m {
		case magic12, magic116, magic118, magic120:
			return m, reader{bigEndian: be, ptrSize: ptrSize}, true
		}
	}
	return 0, reader{}, false
}

// parseHeader decodes the header at the start of data and checks that every
// sub-table it names lies inside data. A header with a known magic is read
// by its magic's layout; a Go 1.18+ magic whose header does not validate
// so is tried without the textStart word. A header with an unknown magic
// is read as the Go 1.20 layout, with or without textStart, if its
// structure allows (see magicless); the error then says why not.
func parseHeader(data []byte) (*header, error) {
	m, rd, ok := parseMagic(data)
	if !ok {
		return parseUnknownHeader(data)
	}
	h, err := parseKnownHeader(data, m, rd, 0)
	if err != nil && (m == magic118 || m == magic120) {
		if h7, err7 := parseKnownHeader(data, m, rd, 7); err7 == nil {
			return h7, nil
		}
	}
	return h, err
}

// parseUnknownHeader reads a header whose magic no release writes as the
// Go 1.20 layout, with eight or seven words; both byte orders are tried.
func parseUnknownHeader(data []byte) (*header, error) {
	rd, ok := magicless(data)
	if !ok {
		return nil, ErrNoTable
	}
	var first error
	for _, be := range []bool{false, true} {
		rd.bigEndian = be
		for _, words := range []int{8, 7} {
			h, err := parseKnownHeader(data, magic120, rd, words)
			if err == nil {
				h.stored = rd.u32(data)
				return h, nil
			}
			if first == nil {
				first = err
			}
		}
	}
	return nil, fmt.Errorf("unknown pclntab magic %#x, and the header does not validate as the Go 1.20 layout: %w", binary.LittleEndian.Uint32(data), first)
}

// parseKnownHeader decodes a header of layout family m. words is the
// number of header words for a 1.18+ family (0: the family's own, 8): with
// a number not the family's own, the function name table must start right
// after the header, as the linker places it.
func parseKnownHeader(data []byte, m magic, rd reader, words int) (*header, error) {
	h := &header{magic: m, stored: rd.u32(data), rd: rd, quantum: uint32(data[6])}
	p := uint64(rd.ptrSize)
	size := uint64(len(data))
	word := func(i uint64) uint64 { return rd.ptr(data[8+i*p:]) }

	if m == magic12 {
		h.words = 1
		if size < 8+p {
			return nil, corrupt("pclntab header truncated")
		}
		h.nfunc = word(0)
		h.names, h.pctab, h.funcs = data, data, data
		// functab: nfunc entries of two pointers, the end PC, and the
		// file table offset in the last entry's funcoff slot.
		if h.nfunc > (size-8-p)/(2*p) {
			return nil, corrupt("pclntab claims %d functions, more than fit", h.nfunc)
		}
		tabEnd := 8 + p + h.nfunc*2*p + p
		if tabEnd+4 > size {
			return nil, corrupt("functab truncated")
		}
		h.functab = data[8+p : tabEnd]
		fileOff := uint64(rd.u32(data[tabEnd:]))
		if fileOff+4 > size {
			return nil, corrupt("file table offset %#x out of range", fileOff)
		}
		h.filetab = data[fileOff:]
		return h, nil
	}

	nwords := uint64(7)
	if m != magic116 {
		nwords = 8
	}
	strict := words != 0
	if strict {
		nwords = uint64(words)
	}
	h.words = int(nwords)
	if size < 8+nwords*p {
		return nil, corrupt("pclntab header truncated")
	}
	h.nfunc, h.nfiles = word(0), word(1)
	i := uint64(2)
	if nwords == 8 {
		h.textStart = word(2)
		i = 3
	}
	funcname, cu, filetab, pctab, pcln := word(i), word(i+1), word(i+2), word(i+3), word(i+4)
	hdrEnd := 8 + nwords*p
	if strict && funcname != hdrEnd {
		return nil, corrupt("a %d-word pclntab header would end at %#x, but the function name table starts at %#x", nwords, hdrEnd, funcname)
	}
	if !(hdrEnd <= funcname && funcname <= cu && cu <= filetab && filetab <= pctab && pctab <= pcln && pcln <= size) {
		return nil, corrupt("pclntab header offsets out of order or out of range")
	}
	h.names = data[funcname:cu]
	h.cutab = data[cu:filetab]
	h.filetab = data[filetab:pctab]
	h.pctab = data[pctab:pcln]
	h.funcs = data[pcln:]
	es := h.entrySize()
	rest := size - pcln
	if h.nfunc > rest/es {
		return nil, corrupt("pclntab claims %d functions, more than fit", h.nfunc)
	}
	end := h.nfunc*es + es/2 // the sentinel is one entry PC
	if end > rest {
		return nil, corrupt("functab truncated")
	}
	h.functab = h.funcs[:end]
	return h, nil
}
