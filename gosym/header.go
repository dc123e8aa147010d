package gosym

import "encoding/binary"

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
	magic     magic
	rd        reader
	quantum   uint32
	nfunc     uint64
	nfiles    uint64 // 1.16+
	textStart uint64 // header word of 1.18–1.25; 0 otherwise

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
// sub-table it names lies inside data.
func parseHeader(data []byte) (*header, error) {
	m, rd, ok := parseMagic(data)
	if !ok {
		return nil, ErrNoTable
	}
	h := &header{magic: m, rd: rd, quantum: uint32(data[6])}
	p := uint64(rd.ptrSize)
	size := uint64(len(data))
	word := func(i uint64) uint64 { return rd.ptr(data[8+i*p:]) }

	if m == magic12 {
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
	if size < 8+nwords*p {
		return nil, corrupt("pclntab header truncated")
	}
	h.nfunc, h.nfiles = word(0), word(1)
	i := uint64(2)
	if m != magic116 {
		h.textStart = word(2)
		i = 3
	}
	funcname, cu, filetab, pctab, pcln := word(i), word(i+1), word(i+2), word(i+3), word(i+4)
	hdrEnd := 8 + nwords*p
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
