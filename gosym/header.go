package gosym

import (
	"encoding/binary"
	"fmt"
	"strings"
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
func (h *header) entrySize() uint64 { return entrySize(h.magic, h.rd.ptrSize) }

// entrySize returns the size of one functab entry of layout family m
// with pointers of p bytes: two u32 from Go 1.18, else two pointers.
func entrySize(m magic, p int) uint64 {
	if m >= magic118 && m <= magic120 {
		return 8
	}
	return 2 * uint64(p)
}

// Unknown magics. garble (mvdan.cc/garble) writes a random first word
// and leaves the rest of a Go 1.20-family header as the linker wrote it;
// a release may drop the header's dead textStart word. Such a header is
// read as the Go 1.20 layout when its structure says so: the rest of the
// first eight bytes is a Go header's (two zero bytes, a quantum of 1, 2 or
// 4, a pointer size of 4 or 8), the function name table starts where the
// linker places it after the header (nameTableAfter), and every offset is
// in order and in range. The functab and the records are checked
// afterwards (plausibleUnknown for the scan, Table.validate at open).

// nameTableAfter reports whether a function name table at offset off of
// data starts where a linker places it after a header that ends at end:
// right after it (Go 1.16, Go 1.26 on, and 1.18–1.25 on arm, whose
// largest alignment is 8 bytes), or, in Go 1.18–1.25, at the next
// multiple of the symbol alignment, the architecture's largest (32 bytes
// on every other port: 0x60 after the 0x48 bytes of a 64-bit header; 8 or
// 16 for a name table shorter than 32 bytes), with only zero bytes
// between.
func nameTableAfter(data []byte, end, off uint64) bool {
	if off == end {
		return true
	}
	if off > uint64(len(data)) {
		return false
	}
	for a := uint64(8); a <= 32; a *= 2 {
		if off == (end+a-1)&^(a-1) {
			for _, c := range data[end:off] {
				if c != 0 {
					return false
				}
			}
			return true
		}
	}
	return false
}

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

// parseMagic checks the first eight bytes of a pclntab (FORMAT.md, "Header") and returns
// its magic and reader.
func parseMagic(data []byte) (magic, reader, bool) {
	rd, ok := magicless(data)
	if !ok {
		return 0, reader{}, false
	}
	if m := magic(binary.LittleEndian.Uint32(data)); m.known() {
		return m, rd, true
	}
	if m := magic(binary.BigEndian.Uint32(data)); m.known() {
		rd.bigEndian = true
		return m, rd, true
	}
	return 0, reader{}, false
}

// known reports whether m is a magic some release writes.
func (m magic) known() bool {
	switch m {
	case magic12, magic116, magic118, magic120:
		return true
	}
	return false
}

// parseHeader decodes the header at the start of data and checks that every
// sub-table it names lies inside data. A header with a known magic is read
// by its magic's layout; a Go 1.18+ magic whose header does not validate
// so is tried without the textStart word. A header with an unknown magic
// is read as the Go 1.20 layout, with or without textStart, if its
// structure allows (see magicless); the error then says why not.
//
// A header with an unknown magic is read as the Go 1.18 layout instead
// when its records' sizes say so (recordFamily).
func parseHeader(data []byte) (*header, error) {
	return parseHeaderFrom(data, data)
}

// maxHeaderSize is the size of the largest header: eight bytes and eight
// words of eight bytes.
const maxHeaderSize = 8 + 8*8

// parseHeaderFrom is parseHeader, reading the header's fields from head,
// a copy of the first min(len(data), maxHeaderSize) bytes of data or more
// (read with pread by Open: see Table.copyData); the sub-tables are
// slices of data.
func parseHeaderFrom(head, data []byte) (*header, error) {
	h := new(header)
	if f := h.readFrom(head, data); !f.ok() {
		return nil, f.err(head)
	}
	if !h.magicKnown() {
		if err := h.recordFamily(); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// recordFamilySample is the number of records, from the first, whose
// sizes recordFamily checks.
const recordFamilySample = 32

// recordFamily tells, for a header with an unknown magic read as the Go
// 1.20 layout, its records' layout from their sizes, so that a Go
// 1.18–1.19 table (the name table after the same padding as 1.20–1.25's,
// but 40-byte _func records without startLine, and 20-byte inline
// records) is never read with Go 1.20's. The linker writes the records
// one after the other in functab order, each aligned to the pointer size:
// its fixed part (44 bytes from Go 1.20, 40 in 1.18 and 1.19), then
// npcdata and nfuncdata u32 offsets, whose counts the fixed part holds
// (at bytes 28 and 43, or 28 and 39). If every one of the first
// recordFamilySample records but the last has the size Go 1.20's layout
// gives it, the header stays as it is; else, if every one has Go 1.18's,
// it is read as Go 1.18's (magic118); else the table is refused. Records
// whose sizes fit both (no funcdata) leave it Go 1.20's. Constant work,
// on the records Open reads first.
func (h *header) recordFamily() error {
	n := min(h.nfunc, recordFamilySample)
	if n < 2 || h.magic != magic120 {
		return nil
	}
	rd, p := h.rd, uint64(h.rd.ptrSize)
	rnd := func(x uint64) uint64 { return (x + p - 1) &^ (p - 1) }
	fit120, fit118 := true, true
	for i := uint64(0); i+1 < n; i++ {
		off, next := uint64(rd.u32(h.functab[i*8+4:])), uint64(rd.u32(h.functab[i*8+12:]))
		if off > uint64(len(h.funcs)) || uint64(len(h.funcs))-off < 44 || next < off {
			fit120, fit118 = false, false
			break
		}
		rec := h.funcs[off:]
		npcdata := uint64(rd.u32(rec[28:]))
		fit120 = fit120 && next-off == rnd(44+4*npcdata+4*uint64(rec[43]))
		fit118 = fit118 && next-off == rnd(40+4*npcdata+4*uint64(rec[39]))
	}
	switch {
	case fit120:
		return nil
	case fit118:
		h.magic = magic118
		return nil
	}
	return corrupt("unknown pclntab magic %#x: the sizes of the first %d function records fit neither Go 1.20's _func layout nor Go 1.18's", h.stored, n)
}

// read is parseHeader into h, without allocating, so that the scan for a
// table may try it at every candidate position (find.go). After a fault,
// h holds nothing of use.
func (h *header) read(data []byte) headerFault { return h.readFrom(data, data) }

// readFrom is read, with the header's fields read from head (see
// parseHeaderFrom).
func (h *header) readFrom(head, data []byte) headerFault {
	if m, rd, ok := parseMagic(head); ok {
		return h.readKnownFrom(head, data, m, rd)
	}
	// An unknown magic: the Go 1.20 layout with eight or seven words, in
	// either byte order, the name table where the linker places it after
	// the header (nameTableAfter, decode's first test with a number of
	// words); the error is the first's.
	// scanMagicless (find.go) makes these tests, in this order, for the
	// scan.
	rd, ok := magicless(head)
	if !ok {
		return headerFault{what: faultNoTable}
	}
	for _, be := range [2]bool{false, true} {
		rd.bigEndian = be
		for _, words := range [2]int{8, 7} {
			if h.decode(head, data, magic120, rd, words).ok() {
				h.stored = rd.u32(head)
				return headerFault{}
			}
		}
	}
	rd.bigEndian = false
	f := h.decode(head, data, magic120, rd, 8)
	f.unknown = true
	return f
}

// The Go 1.20 layouts a header with an unknown magic is tried as (see
// read), one bit each, in the order read tries them: little-endian before
// big-endian, eight words before seven. nameTableFollows (find.go)
// returns a set of them.
const (
	layoutLE8 uint8 = 1 << iota
	layoutLE7
	layoutBE8
	layoutBE7
)

// readKnown is read for a header whose magic m and reader rd parseMagic
// returned.
func (h *header) readKnown(data []byte, m magic, rd reader) headerFault {
	return h.readKnownFrom(data, data, m, rd)
}

// readKnownFrom is readKnown, with the header's fields read from head
// (see parseHeaderFrom).
func (h *header) readKnownFrom(head, data []byte, m magic, rd reader) headerFault {
	f := h.decode(head, data, m, rd, 0)
	if !f.ok() && (m == magic118 || m == magic120) && h.decode(head, data, m, rd, 7).ok() {
		return headerFault{}
	}
	return f
}

// headerFault says why a header does not decode, without allocating:
// what failed and up to three numbers, made into an error only by err.
type headerFault struct {
	what    faultKind
	unknown bool // the magic is unknown: what says why the Go 1.20 layout does not fit
	a, b, c uint64
}

type faultKind uint8

const (
	faultNone      faultKind = iota
	faultNoTable             // not a pclntab header at all: ErrNoTable
	faultTruncated           // the header does not fit
	faultNfunc               // a: nfunc
	faultFunctab             // the functab does not fit
	faultFileOff             // a: the file table's offset
	faultNameTable           // a: words, b: the header's end, c: the name table's offset
	faultOrder               // the sub-tables' offsets
)

// faultFormats are the messages of the faults, formatted with a, b, c.
var faultFormats = [...]string{
	faultTruncated: "pclntab header truncated",
	faultNfunc:     "pclntab claims %d functions, more than fit",
	faultFunctab:   "functab truncated",
	faultFileOff:   "file table offset %#x out of range",
	faultNameTable: "a %d-word pclntab header would end at %#x, but the function name table starts at %#x",
	faultOrder:     "pclntab header offsets out of order or out of range",
}

func (f headerFault) ok() bool { return f.what == faultNone }

// err returns the fault's error for the header at the start of data:
// ErrNoTable, or a *FormatError (for an unknown magic, wrapped in one that
// names the magic).
func (f headerFault) err(data []byte) error {
	if f.what == faultNoTable {
		return ErrNoTable
	}
	args := []any{f.a, f.b, f.c}[:strings.Count(faultFormats[f.what], "%")]
	err := corrupt(faultFormats[f.what], args...)
	if f.unknown {
		return fmt.Errorf("unknown pclntab magic %#x, and the header does not validate as the Go 1.20 layout: %w", binary.LittleEndian.Uint32(data), err)
	}
	return err
}

// decode decodes into h a header of layout family m. words is the number
// of header words for a 1.18+ family (0: the family's own, 8): with a
// number not the family's own, the function name table must start where
// the linker places it after the header (nameTableAfter). The most
// telling test comes first, and h is written only once the header
// decoded: the scan asks this of candidates that are nearly all rejected
// at once. The header's fields are read from head, data itself or a copy
// of its first bytes (see parseHeaderFrom); the sub-tables are slices of
// data.
func (h *header) decode(head, data []byte, m magic, rd reader, words int) headerFault {
	p := uint64(rd.ptrSize)
	size := uint64(len(data))
	word := func(i uint64) uint64 { return rd.ptr(head[8+i*p:]) }

	if m == magic12 {
		if size < 8+p {
			return headerFault{what: faultTruncated}
		}
		nfunc := word(0)
		// functab: nfunc entries of two pointers, the end PC, and the
		// file table offset in the last entry's funcoff slot.
		if nfunc > (size-8-p)/(2*p) {
			return headerFault{what: faultNfunc, a: nfunc}
		}
		tabEnd := 8 + p + nfunc*2*p + p
		if tabEnd+4 > size {
			return headerFault{what: faultFunctab}
		}
		fileOff := uint64(rd.u32(data[tabEnd:]))
		if fileOff+4 > size {
			return headerFault{what: faultFileOff, a: fileOff}
		}
		*h = header{magic: m, stored: rd.u32(head), rd: rd, quantum: uint32(head[6]), words: 1, nfunc: nfunc,
			names: data, pctab: data, funcs: data, functab: data[8+p : tabEnd], filetab: data[fileOff:]}
		return headerFault{}
	}

	nwords := uint64(7)
	if m != magic116 {
		nwords = 8
	}
	strict := words != 0
	if strict {
		nwords = uint64(words)
	}
	if size < 8+nwords*p {
		return headerFault{what: faultTruncated}
	}
	i := nwords - 5 // the function name table's offset: the word after nfunc, nfiles and textStart
	funcname, hdrEnd := word(i), 8+nwords*p
	if strict && !nameTableAfter(data, hdrEnd, funcname) {
		return headerFault{what: faultNameTable, a: nwords, b: hdrEnd, c: funcname}
	}
	cu, filetab, pctab, pcln := word(i+1), word(i+2), word(i+3), word(i+4)
	if !(hdrEnd <= funcname && funcname <= cu && cu <= filetab && filetab <= pctab && pctab <= pcln && pcln <= size) {
		return headerFault{what: faultOrder}
	}
	nfunc, es := word(0), entrySize(m, rd.ptrSize)
	rest := size - pcln
	if nfunc > rest || nfunc*es > rest { // nfunc > rest/es, without a division (nfunc*es cannot overflow)
		return headerFault{what: faultNfunc, a: nfunc}
	}
	end := nfunc*es + es/2 // the sentinel is one entry PC
	if end > rest {
		return headerFault{what: faultFunctab}
	}
	// Every field, one by one: assigning a composite literal to *h would
	// copy it through the runtime (typedmemmove), which costs more than
	// the rest of decode in the scan of a file full of such headers.
	h.magic, h.stored, h.rd, h.quantum, h.words = m, rd.u32(head), rd, uint32(head[6]), int(nwords)
	h.nfunc, h.nfiles, h.textStart, h.entryKey, h.funcIDBeyond = nfunc, word(1), 0, 0, 0
	if nwords == 8 {
		h.textStart = word(2)
	}
	h.names, h.cutab, h.filetab = data[funcname:cu], data[cu:filetab], data[filetab:pctab]
	h.pctab, h.funcs, h.functab = data[pctab:pcln], data[pcln:], data[pcln:pcln+end]
	return headerFault{}
}
