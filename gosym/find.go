package gosym

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/gosym-dev/gosym/internal/addrspace"
	"github.com/gosym-dev/gosym/object"
)

// pclntabSections are the section names the linkers give the pclntab.
var pclntabSections = []string{".gopclntab", ".data.rel.ro.gopclntab", "__gopclntab"}

// findPclntab returns the pclntab bytes, their address, and how they were
// found.
func findPclntab(obj object.Object, secs []object.SectionHeader, mem *addrspace.Space) ([]byte, uint64, string, error) {
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
		}
	}
	if sl, ok := obj.(object.SymbolLookup); ok {
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
	// keep the table in .text).
	for _, exec := range []bool{false, true} {
		for i, s := range secs {
			if s.Flags&object.SectionAlloc == 0 || s.FileSize == 0 || (s.Flags&object.SectionExec != 0) != exec {
				continue
			}
			sec, err := obj.SectionData(i)
			if err != nil {
				continue
			}
			if off, ok := scanPclntab(sec); ok {
				return sec[off:], s.Addr + uint64(off), "scan of " + sectionName(s), nil
			}
		}
	}
	return nil, 0, "", ErrNoTable
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

// scanPclntab finds the first plausible pclntab header in b.
func scanPclntab(b []byte) (int, bool) {
	ff := []byte{0xff, 0xff, 0xff}
	for off := 0; ; {
		i := bytes.Index(b[off:], ff)
		if i < 0 {
			return 0, false
		}
		i += off
		// Little-endian magics end in ff ff ff; big-endian ones start so.
		for _, start := range []int{i - 1, i} {
			if start >= 0 && start%4 == 0 && plausiblePclntab(b[start:]) {
				return start, true
			}
		}
		off = i + 1
	}
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
