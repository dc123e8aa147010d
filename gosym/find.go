package gosym

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/gosym-dev/gosym/internal/addrspace"
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
			if _, _, ok := parseMagic(data); ok {
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
		if data, addr, ok := pclntabOfModuledata(sl, obj.Endian(), mem); ok {
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
// point at a pclntab header of its pointer size and byte order.
func pclntabOfModuledata(sl object.SymbolLookup, order binary.ByteOrder, mem *addrspace.Space) ([]byte, uint64, bool) {
	sym, err := sl.LookupSymbol("runtime.firstmoduledata")
	if err != nil {
		return nil, 0, false
	}
	md := mem.From(sym.Addr)
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
		m, rd, ok := parseMagic(data)
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
// A header is pointer-aligned, and its second word holds two zero bytes,
// the quantum (1, 2 or 4) and the pointer size (4 or 8) in that order
// whatever the byte order. The scan looks for the pointer-size bytes with
// bytes.IndexByte, which skips data without them (zeros, text, most
// tables) at memory speed, and checks each hit at a 4-aligned address
// with a few byte comparisons: no allocation, constant work per hit, so
// the scan is linear on any data. Where hits are dense it steps word by
// word instead.
func scanPclntab(b []byte, addr uint64, wantUnknown bool) (known, unknown int) {
	known, unknown = -1, -1
	for _, ps := range []byte{8, 4} {
		k, u := scanPtrSize(b, addr, ps, wantUnknown)
		if k >= 0 && (known < 0 || k < known) {
			known = k
		}
		if u >= 0 && (unknown < 0 || u < unknown) {
			unknown = u
		}
	}
	return known, unknown
}

// scanPtrSize is scanPclntab for headers of pointer size ps. It stops at
// the first known one.
func scanPtrSize(b []byte, addr uint64, ps byte, wantUnknown bool) (known, unknown int) {
	known, unknown = -1, -1
	// check tests the candidate header at off, whose second word passed.
	check := func(off int) bool {
		if b[off+3] == 0xff || b[off] == 0xff {
			if _, _, ok := parseMagic(b[off:]); ok {
				return plausiblePclntab(b[off:])
			}
		}
		if wantUnknown && unknown < 0 && nameTableFollows(b[off:]) && plausibleUnknown(b[off:]) {
			unknown = off
		}
		return false
	}
	// hdrWord reports whether the 4 bytes at off+4 are a header's second
	// word, but for the pointer size.
	hdrWord := func(off int) bool {
		q := b[off+6]
		return b[off+4] == 0 && b[off+5] == 0 && (q == 1 || q == 2 || q == 4)
	}
	mis := int(addr % 4)
	const window = 4096 // bytes stepped word by word where hits are dense
	near := 0           // consecutive hits less than 16 bytes apart
	for from := 7; from < len(b); {
		i := bytes.IndexByte(b[from:], ps)
		if i < 0 {
			break
		}
		if i < 16 {
			near++
		} else {
			near = 0
		}
		i += from
		from = i + 1
		off := i - 7
		if (off+mis)%4 == 0 && hdrWord(off) && check(off) {
			return off, unknown
		}
		if near < 64 {
			continue
		}
		// Dense: every aligned word of the next window.
		near = 0
		off += (4 - (off+mis)%4) % 4
		end := min(len(b)-8, off+window)
		for ; off <= end; off += 4 {
			if b[off+7] == ps && hdrWord(off) && check(off) {
				return off, unknown
			}
		}
		from = off + 7
	}
	return known, unknown
}

// nameTableFollows is headerShape's first test reduced to one byte per
// layout and byte order, for the scan: the function name table's offset,
// 8 + words × pointer size (less than 256), is the low byte of its word.
func nameTableFollows(b []byte) bool {
	p := int(b[7])
	for n := 8; n >= 7; n-- {
		pos, v := 8+(n-5)*p, byte(8+n*p)
		if pos+p <= len(b) && (b[pos] == v || b[pos+p-1] == v) {
			return true
		}
	}
	return false
}

// plausiblePclntab checks a candidate header found by scanning: it must
// parse, and its first functions must be sorted and point at records whose
// own entries agree.
func plausiblePclntab(b []byte) bool {
	if _, _, ok := parseMagic(b); !ok {
		return false
	}
	h, err := parseHeader(b)
	if err != nil || h.nfunc == 0 {
		return false
	}
	t := &Table{hdr: h, data: b, layout: layoutFor(h.magic, 12, h.rd.ptrSize)}
	if h.magic != magic12 && h.magic != magic116 {
		// Offsets into text: checked through the record's own copy.
		t.layout = layoutFor(h.magic, 20, h.rd.ptrSize)
	}
	prev := uint64(0)
	for i := uint64(0); i < min(h.nfunc, 8); i++ {
		e := t.entryAt(i)
		if i > 0 && e < prev {
			return false
		}
		prev = e
		off, ok := t.funcOffAt(i)
		if !ok {
			continue
		}
		if _, _, err := t.checkRecord(i); err != nil || off == 0 {
			return false
		}
	}
	return true
}

// plausibleUnknown checks a candidate header whose magic is unknown: its
// structure must be a Go 1.20-layout header's (parseHeader), it must name
// functions and files, and its first functions must be sorted, with
// records inside the table whose names are NUL-terminated strings of the
// name table. The records' entries are not compared with the functab's
// here: garble stores them XORed (validate.go checks them with the key).
func plausibleUnknown(b []byte) bool {
	if !headerShape(b) {
		return false
	}
	if _, _, ok := parseMagic(b); ok {
		return false
	}
	h, err := parseHeader(b)
	if err != nil || h.nfunc == 0 || h.nfiles == 0 {
		return false
	}
	t := &Table{hdr: h, data: b, layout: layoutFor(h.magic, 20, h.rd.ptrSize)}
	prev := uint32(0)
	for i := uint64(0); i < min(h.nfunc, 8); i++ {
		e := t.entryOff(i)
		if i > 0 && e < prev {
			return false
		}
		prev = e
		_, nameOff, ok := t.entryXor(i)
		if !ok || nameOff >= uint32(len(h.names)) {
			return false
		}
		if _, ok := stringLen(h.names, uint64(nameOff)); !ok {
			return false
		}
	}
	return t.entryOff(h.nfunc) >= prev
}
