package gosym

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/gosym-dev/gosym/internal/addrspace"
	"github.com/gosym-dev/gosym/internal/objfile"
	"github.com/gosym-dev/gosym/object"
)

// pclntabSections are the section names the linkers give the pclntab.
var pclntabSections = []string{".gopclntab", ".data.rel.ro.gopclntab", "__gopclntab"}

// findPclntab returns the pclntab bytes, their address, and how they were
// found: by section name, by symbol, or by scanning the loadable data for
// a header, with a magic some release writes or, failing that, by
// structure alone (an unknown magic: garble, a future release). A table
// whose section was renamed, merged into another (.data.rel.ro) or whose
// section headers are gone is found by the scan. Without a table, the
// error (a *noTableError, which matches ErrNoTable) says what was looked
// for and what was found instead.
func findPclntab(obj object.Object, secs []object.SectionHeader, mem *addrspace.Space) ([]byte, uint64, string, error) {
	var ev noTableError
	for i, s := range secs {
		for _, name := range pclntabSections {
			if s.Name != name {
				continue
			}
			data, err := obj.SectionData(i)
			if err != nil {
				return nil, 0, "", objectError(err)
			}
			var head [8]byte
			if _, _, ok := parseMagic(head[:objfile.CopyData(obj, head[:], data)]); ok {
				return data, s.Addr, "section " + name, nil
			}
			if plausibleUnknown(data) {
				return data, s.Addr, "section " + name + ", its header checked by structure (magic unknown)", nil
			}
			ev.found = append(ev.found, fmt.Sprintf("section %s, whose %s", name, describeHeader(data)))
		}
	}
	sl, hasSyms := obj.(object.SymbolLookup)
	if hasSyms {
		for _, pre := range []string{"runtime.", ""} {
			// epclntab is looked up only with pclntab: each lookup
			// reads pages of the symbol table.
			start, err := sl.LookupSymbol(pre + "pclntab")
			if err != nil {
				continue
			}
			end, err := sl.LookupSymbol(pre + "epclntab")
			if err != nil || end.Addr <= start.Addr {
				continue
			}
			if data := mem.Slice(start.Addr, end.Addr-start.Addr); data != nil {
				return data, start.Addr, "symbol " + pre + "pclntab", nil
			}
		}
	}
	if sl, ok := obj.(object.SymbolLookup); ok {
		if data, addr, ok := pclntabOfModuledata(obj, sl, obj.Endian(), mem); ok {
			return data, addr, "symbol runtime.firstmoduledata", nil
		}
	}
	// Scan the loadable data, read-only sections first (old PE binaries
	// keep the table in .text). A header with a known magic anywhere wins
	// over one recognized by structure alone.
	var unknown struct {
		data []byte
		addr uint64
		sec  object.SectionHeader
	}
	scanned, nsecs := 0, 0
	for _, exec := range []bool{false, true} {
		for i, s := range secs {
			if s.Flags&object.SectionAlloc == 0 || s.FileSize == 0 || (s.Flags&object.SectionExec != 0) != exec {
				continue
			}
			sec, err := obj.SectionData(i)
			if err != nil {
				continue
			}
			scanned += len(sec)
			nsecs++
			known, unk := scanPclntab(sec, s.Addr, unknown.data == nil)
			if known >= 0 {
				return sec[known:], s.Addr + uint64(known), "scan of " + sectionName(s), nil
			}
			if unk >= 0 {
				unknown.data, unknown.addr, unknown.sec = sec[unk:], s.Addr+uint64(unk), s
			}
		}
	}
	if unknown.data != nil {
		return unknown.data, unknown.addr, "scan of " + sectionName(unknown.sec) + " for a header by structure (magic unknown)", nil
	}
	ev.looked = fmt.Sprintf("sections %s, symbols runtime.pclntab and pclntab, and a pclntab header (known magic or by structure) in %d bytes of %d loadable sections",
		strings.Join(pclntabSections, ", "), scanned, nsecs)
	if !hasSyms {
		ev.looked = strings.Replace(ev.looked, ", symbols runtime.pclntab and pclntab", " (no symbol table)", 1)
	}
	ev.found = append(ev.found, evidence(obj, secs)...)
	return nil, 0, "", &ev
}

// noTableError is ErrNoTable with what was looked for and what was found.
type noTableError struct {
	looked string
	found  []string
}

func (e *noTableError) Error() string {
	s := ErrNoTable.Error() + " (looked for " + e.looked + ")"
	if len(e.found) > 0 {
		s += "; found: " + strings.Join(e.found, "; ")
	}
	return s
}

// Is reports whether target is ErrNoTable.
func (e *noTableError) Is(target error) bool { return target == ErrNoTable }

// describeHeader says, for an error, what the first bytes of a would-be
// pclntab are.
func describeHeader(data []byte) string {
	if len(data) < 8 {
		return fmt.Sprintf("%d bytes are too short for a pclntab header", len(data))
	}
	if _, err := parseHeader(data); err != nil && err != ErrNoTable {
		return fmt.Sprintf("header (first word %#x) does not validate: %v", binary.LittleEndian.Uint32(data), err)
	}
	return fmt.Sprintf("first eight bytes % x are not a pclntab header", data[:8])
}

// packerSignatures are the marks packers leave in what they pack, found
// in the loadable data or the file's first 4 KiB.
var packerSignatures = []struct{ sig, name string }{
	{"UPX!", "UPX"},
	{"$Info: This file is packed with the UPX", "UPX"},
	{"MPRESS1", "MPRESS"},
	{".aspack", "ASPack"},
	{"PEC2", "PECompact"},
}

// evidence lists what an object without a readable table holds that
// explains it: a packer's signature, Go build info, no loadable data.
func evidence(obj object.Object, secs []object.SectionHeader) []string {
	var found []string
	seen := map[string]bool{}
	alloc := 0
	look := func(where string, b []byte) {
		for _, p := range packerSignatures {
			if seen[p.name] {
				continue
			}
			if i := bytes.Index(b, []byte(p.sig)); i >= 0 {
				seen[p.name] = true
				found = append(found, fmt.Sprintf("the %s packer's signature %q in %s at offset %#x", p.name, p.sig, where, i))
			}
		}
	}
	for i, s := range secs {
		if s.Flags&object.SectionAlloc != 0 && s.FileSize > 0 {
			alloc++
		}
		if strings.Contains(strings.ToLower(s.Name), "upx") && !seen["UPX"] {
			seen["UPX"] = true
			found = append(found, fmt.Sprintf("a section named %s (the UPX packer's)", s.Name))
		}
		if s.Flags&object.SectionAlloc == 0 || s.FileSize == 0 {
			continue
		}
		if b, err := obj.SectionData(i); err == nil {
			look(sectionName(s), b)
			if s.Name == ".go.buildinfo" || bytes.HasPrefix(b, []byte("\xff Go buildinf:")) {
				found = append(found, "Go build info in "+sectionName(s)+" (a Go binary whose pclntab is missing or unreadable)")
			}
		}
	}
	if ra, ok := obj.(interface {
		ReadAt([]byte, int64) (int, error)
	}); ok {
		head := make([]byte, 4096)
		if n, _ := ra.ReadAt(head, 0); n > 0 {
			look("the file's first 4 KiB", head[:n])
		}
	}
	if alloc == 0 {
		found = append(found, "no loadable data")
	}
	return found
}

// pclntabOfModuledata returns the pclntab that runtime.firstmoduledata
// points to, and its address: the moduledata's first word is the
// pclntab's address (of the pcHeader from Go 1.16, of the pclntable slice
// before), and its pclntable slice (words 0 and 1 before Go 1.16, 13 and
// 14 after) ends the table. It spares a binary whose pclntab has neither
// a section nor symbols of its own, such as an externally linked PIE, a
// scan of its data. ok is false if the symbol is missing or does not
// point at a pclntab header of its pointer size and byte order. The
// moduledata's words and the header's first bytes are read from obj with
// objfile.CopyData.
func pclntabOfModuledata(obj object.Object, sl object.SymbolLookup, order binary.ByteOrder, mem *addrspace.Space) ([]byte, uint64, bool) {
	sym, err := sl.LookupSymbol("runtime.firstmoduledata")
	if err != nil {
		return nil, 0, false
	}
	var mdBuf [(mdPclntable + 2) * 8]byte
	md := mdBuf[:objfile.CopyData(obj, mdBuf[:], mem.From(sym.Addr))]
	for _, p := range []uint64{8, 4} {
		if uint64(len(md)) < (mdPclntable+2)*p {
			continue
		}
		w := func(i uint64) uint64 {
			if p == 8 {
				return order.Uint64(md[i*p:])
			}
			return uint64(order.Uint32(md[i*p:]))
		}
		addr := w(0)
		data := mem.From(addr)
		var head [8]byte
		m, rd, ok := parseMagic(head[:objfile.CopyData(obj, head[:], data)])
		if !ok || uint64(rd.ptrSize) != p || rd.bigEndian != (order == binary.BigEndian) {
			continue
		}
		start, n := w(0), w(1)
		if m != magic12 {
			start, n = w(mdPclntable), w(mdPclntable+1)
		}
		if start >= addr && start-addr <= uint64(len(data)) && n <= uint64(len(data))-(start-addr) {
			data = data[:start-addr+n]
		}
		return data, addr, true
	}
	return nil, 0, false
}

// sectionName names a section in messages.
func sectionName(s object.SectionHeader) string {
	if s.Name == "" {
		return fmt.Sprintf("segment at %#x", s.Addr)
	}
	return "section " + s.Name
}

// scanPclntab finds, in b (loaded at addr), the first plausible pclntab
// header with a known magic, and, if wantUnknown, the first one whose
// magic is unknown but whose structure is a header's; -1 for none.
//
// A header is 4-aligned, and its second word holds two zero bytes, the
// quantum (1, 2 or 4) and the pointer size (4 or 8) in that order,
// whatever the byte order. The scan reads that word at each 4-aligned
// offset with one load and one mask, which rejects nearly all data (zeros
// and random bytes alike) at a few bytes per cycle. A position that
// passes is tested by allocation-free checks that grow in cost as they go:
// the magic's bytes; one word of the header (where the function name
// table starts: nameTableNear for a known magic, nameTableFollows for an
// unknown one); the header's offsets (header.read); then eight functab
// entries and their records, each read in constant time (plausibleFuncs).
// For an unknown magic, the last two are scanMagicless, which makes the
// same tests without filling a header. The scan is linear on any data, with a constant that data made so that
// every position passes the first tests, or decodes as a header, keeps
// small (BENCHMARKS.md, "Scanning for a hidden table").
func scanPclntab(b []byte, addr uint64, wantUnknown bool) (known, unknown int) {
	known, unknown = -1, -1
	for off := int((4 - addr%4) % 4); off+8 <= len(b); off += 4 {
		// Bytes 4 and 5 zero, byte 6 at most 7, byte 7 one of 4, 8, 12:
		// a superset of a header's second word, in one test.
		if w := binary.LittleEndian.Uint32(b[off+4 : off+8]); w&0xf3f8ffff != 0 || w&0x0c000000 == 0 {
			continue
		}
		c := b[off:]
		if c[0] == 0xff || c[3] == 0xff { // a known magic's first or last byte
			if m, rd, ok := parseMagic(c); ok {
				if plausibleKnown(c, m, rd) {
					return off, unknown
				}
				continue
			}
		}
		if wantUnknown && unknown < 0 {
			if layouts := nameTableFollows(c); layouts != 0 && scanMagicless(c, layouts) {
				unknown = off
			}
		}
	}
	return known, unknown
}

// nameTableFollows returns the layouts (layoutLE8 and the others) in
// which the function name table of a header at the start of b, of
// pointer size b[7], starts where nameTableAfter accepts it after a
// header of eight or seven words, in either byte order: right after it
// (Go 1.26 on, 1.18–1.25 on arm) or at the next multiple of 8, 16 or 32
// bytes (Go 1.18–1.25: 0x60 for a 64-bit header). It reads the two
// words, unrolled, so that the scan may ask it of every position whose
// second word passed before reading an unknown magic's header, and
// decode only in those layouts. The header's length and its padding are
// nameTableAfter's to check.
func nameTableFollows(b []byte) uint8 {
	var layouts uint8
	switch b[7] {
	case 8: // the offset is 8+8*8 at byte 32, or 8+7*8 at byte 24
		if len(b) >= 40 {
			switch binary.LittleEndian.Uint64(b[32:40]) {
			case 72, 80, 96:
				layouts |= layoutLE8
			case 72 << 56, 80 << 56, 96 << 56:
				layouts |= layoutBE8
			}
		}
		if len(b) >= 32 {
			switch binary.LittleEndian.Uint64(b[24:32]) {
			case 64:
				layouts |= layoutLE7
			case 64 << 56:
				layouts |= layoutBE7
			}
		}
	case 4: // 8+8*4 at byte 20, or 8+7*4 at byte 16
		if len(b) >= 24 {
			switch binary.LittleEndian.Uint32(b[20:24]) {
			case 40, 48, 64:
				layouts |= layoutLE8
			case 40 << 24, 48 << 24, 64 << 24:
				layouts |= layoutBE8
			}
		}
		if len(b) >= 20 {
			switch binary.LittleEndian.Uint32(b[16:20]) {
			case 36, 40, 48, 64:
				layouts |= layoutLE7
			case 36 << 24, 40 << 24, 48 << 24, 64 << 24:
				layouts |= layoutBE7
			}
		}
	}
	return layouts
}

// plausiblePclntab checks a candidate header with a known magic found by
// scanning: it must decode, a Go 1.16+ header with its function name
// table near its end (nameTableNear), and its first functions must be
// sorted and point at records inside the table whose own entries agree.
func plausiblePclntab(b []byte) bool {
	m, rd, ok := parseMagic(b)
	return ok && plausibleKnown(b, m, rd)
}

// plausibleKnown is plausiblePclntab for the magic and reader that
// parseMagic returned.
func plausibleKnown(b []byte, m magic, rd reader) bool {
	if m != magic12 && !nameTableNear(b, rd) {
		return false
	}
	var h header
	if !h.readKnown(b, m, rd).ok() || h.nfunc == 0 {
		return false
	}
	minor := 20
	if h.magic == magic12 || h.magic == magic116 {
		minor = 12
	}
	l := layoutFor(h.magic, minor, h.rd.ptrSize)
	return plausibleFuncs(&h, &l, true)
}

// plausibleUnknown checks a candidate header whose magic is unknown: its
// structure must be a Go 1.20-layout header's (header.read), it must name
// functions and files, and its first functions must be sorted, with
// records inside the table that name functions (see plausibleFuncs). The
// records' entries are not compared with the functab's here: garble
// stores them XORed (validate.go checks them with the key).
func plausibleUnknown(b []byte) bool {
	if _, _, ok := parseMagic(b); ok {
		return false
	}
	var h header
	if !h.read(b).ok() || h.nfunc == 0 || h.nfiles == 0 {
		return false
	}
	return plausibleFuncs(&h, &layouts120[h.rd.ptrSize/8], false)
}

// nameTableNear reports whether the function name table of the Go 1.16+
// header at the start of b, read with rd, starts less than 256 bytes
// after the end of a header of eight or seven words. The linker aligns
// the table to at most 32 bytes (0x60 after Go 1.18's 0x48-byte header,
// right after it in Go 1.16, 1.21 on arm, 1.26): a test of one word
// before a header is decoded.
func nameTableNear(b []byte, rd reader) bool {
	p := rd.ptrSize
	for words := 8; words >= 7; words-- {
		if i := 8 + (words-5)*p; i+p <= len(b) && rd.ptr(b[i:])-uint64(8+words*p) < 256 {
			return true
		}
	}
	return false
}

// layouts120 are the Go 1.20 layouts for 4- and 8-byte pointers, with
// which plausibleUnknown reads records: made once, not per candidate.
var layouts120 = [2]layout{layoutFor(magic120, 20, 4), layoutFor(magic120, 20, 8)}

// plausibleFuncs checks the first eight functab entries of a header found
// by the scan, read with layout l: their entries and the entry after them
// sorted, each record (but a 1.2-family hole's) at a nonzero offset with
// its fixed fields inside the table, and its name offset inside the name
// table. With agree, each record's entry must equal its functab entry; a
// Go 1.16+ table's name offset must also start a string, at offset 0 or
// right after a NUL, as the linker writes the name table (its strings one
// after the other): a test of one byte where looking for the string's end
// would read up to maxString bytes for each candidate. No allocation, and
// constant work whatever the header claims.
func plausibleFuncs(h *header, l *layout, agree bool) bool {
	rd, es := h.rd, h.entrySize()
	p := uint64(rd.ptrSize)
	n := min(h.nfunc, 8)
	entry := func(i uint64) uint64 {
		if es == 8 {
			return uint64(rd.u32(h.functab[i*8:]))
		}
		return rd.ptr(h.functab[i*es:])
	}
	prev := uint64(0)
	for i := uint64(0); i <= n; i++ {
		e := entry(i)
		if e < prev {
			return false
		}
		prev = e
		if i == n {
			break
		}
		var off uint64
		if es == 8 {
			off = uint64(rd.u32(h.functab[i*8+4:]))
		} else if off = rd.ptr(h.functab[i*es+p:]); p == 4 && off == math.MaxUint32 || off == math.MaxUint64 {
			continue // a hole (FORMAT.md, "Functab holes")
		}
		if off == 0 || off > uint64(len(h.funcs)) || uint64(len(h.funcs))-off < uint64(l.fixedSize) {
			return false
		}
		rec := h.funcs[off:]
		if agree {
			if l.entryIsPtr && rd.ptr(rec) != e || !l.entryIsPtr && uint64(rd.u32(rec)) != e {
				return false
			}
		}
		name := uint64(rd.u32(rec[l.nameOff:]))
		if name >= uint64(len(h.names)) {
			return false
		}
		if h.magic != magic12 && name > 0 && h.names[name-1] != 0 {
			return false
		}
	}
	// The entry after the last sampled one, when the table has more.
	return h.nfunc == n || entry(h.nfunc) >= prev
}

// scanMagicless is plausibleUnknown for the scan, for a position whose
// magic is known not to be a release's, tried in the given layouts (those
// nameTableFollows returned: a superset of those that decode), where most
// candidates are rejected: the same tests in the same order (those of
// header.read and decode for the Go 1.20 layout, then those of
// plausibleFuncs), on locals instead of a header, in one function: data
// made of headers that decode costs about 22 ns per candidate instead of
// 60 (BENCHMARKS.md). FuzzScan checks that the scan answers as
// plausibleUnknown does on any data, TestScanMagiclessCorpus on the
// corpus's tables and variants of them.
func scanMagicless(c []byte, layouts uint8) bool {
	if c[6] != 1 && c[6] != 2 && c[6] != 4 { // magicless: the quantum; the scan checked the rest
		return false
	}
	size, p := uint64(len(c)), uint64(c[7])
	for k := 0; layouts>>k != 0; k++ {
		if layouts>>k&1 == 0 {
			continue
		}
		rd := reader{bigEndian: k >= 2, ptrSize: int(p)}
		words := uint64(8 - k%2)
		hdrEnd := 8 + words*p
		if size < hdrEnd {
			continue
		}
		i := 8 + (words-5)*p // the function name table's offset
		funcname, cu, filetab, pctab, pcln := rd.ptr(c[i:]), rd.ptr(c[i+p:]), rd.ptr(c[i+2*p:]), rd.ptr(c[i+3*p:]), rd.ptr(c[i+4*p:])
		if !nameTableAfter(c, hdrEnd, funcname) || !(funcname <= cu && cu <= filetab && filetab <= pctab && pctab <= pcln && pcln <= size) {
			continue
		}
		nfunc, rest := rd.ptr(c[8:]), size-pcln
		if nfunc > rest || nfunc*8+4 > rest {
			continue
		}
		// The first layout that decodes is the header's: from here on,
		// every test decides.
		if nfunc == 0 || rd.ptr(c[8+p:]) == 0 {
			return false
		}
		funcs, names := c[pcln:], c[funcname:cu]
		l := &layouts120[p/8]
		n := min(nfunc, 8)
		prev := uint64(0)
		for j := uint64(0); j <= n; j++ {
			e := uint64(rd.u32(funcs[j*8:]))
			if e < prev {
				return false
			}
			prev = e
			if j == n {
				break
			}
			off := uint64(rd.u32(funcs[j*8+4:]))
			if off == 0 || off > uint64(len(funcs)) || uint64(len(funcs))-off < uint64(l.fixedSize) {
				return false
			}
			name := uint64(rd.u32(funcs[off+uint64(l.nameOff):]))
			if name >= uint64(len(names)) || name > 0 && names[name-1] != 0 {
				return false
			}
		}
		return nfunc == n || uint64(rd.u32(funcs[nfunc*8:])) >= prev
	}
	return false
}
