package gosym

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/gosym-dev/gosym/internal/addrspace"
	"github.com/gosym-dev/gosym/internal/buildinfo"
	"github.com/gosym-dev/gosym/object"
)

// NewTable reads the Go symbol table of obj. It finds the pclntab (by
// section, by symbol, or by scanning the loadable data for a valid header),
// the build info and, for Go 1.18 and later, the moduledata that gives the
// text base and the funcdata base. Its work does not depend on the number
// of functions. An object without a Go symbol table gets an error wrapping
// ErrNoTable; an inconsistent one an error wrapping ErrCorrupted.
func NewTable(obj object.Object) (*Table, error) {
	secs, err := obj.Sections()
	if err != nil {
		return nil, err
	}
	mem, err := addrspace.FromObject(obj)
	if err != nil {
		return nil, err
	}
	data, addr, foundBy, err := findPclntab(obj, secs, mem)
	if err != nil {
		return nil, err
	}
	h, err := parseHeader(data)
	if err != nil {
		return nil, err
	}
	t := &Table{h: h, data: data, addr: addr, mem: mem}
	t.foundBy.pclntab = foundBy
	t.version = buildinfo.Version(obj, secs, mem)
	if t.version == "" {
		t.version = symbolVersion(obj, mem)
	}
	if t.version == "" && h.magic == magic12 {
		// Before Go 1.13 there is no build info; without symbols the
		// version string is found in the data.
		t.version = buildinfo.ScanVersion(obj, secs, addr, uint64(len(data)), 2, 12)
	}
	minor := parseMinor(t.version)
	lo, hi := minorRange(h.magic)
	t.wrapper.known = minor >= lo && minor <= hi
	if !t.wrapper.known {
		minor = t.guessMinor()
	}
	t.l = layoutFor(h.magic, minor, h.rd.ptrSize)
	if h.magic == magic12 {
		t.names = newStrtab(data) // names and paths both live in the table
		t.files = t.names
	} else {
		t.names = newStrtab(h.names)
		t.files = newStrtab(h.filetab)
	}
	if h.magic == magic118 || h.magic == magic120 {
		if err := t.findModuledata(obj, secs); err != nil {
			return nil, err
		}
	}
	if h.nfunc > 0 {
		if _, _, err := t.funcAt(0); err != nil {
			return nil, err
		}
	}
	return t, nil
}

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
				return nil, 0, "", err
			}
			if _, _, ok := parseMagic(data); ok {
				return data, s.Addr, "section " + name, nil
			}
		}
	}
	if sl, ok := obj.(object.SymbolLookup); ok {
		for _, pre := range []string{"runtime.", ""} {
			start, err1 := sl.LookupSymbol(pre + "pclntab")
			end, err2 := sl.LookupSymbol(pre + "epclntab")
			if err1 != nil || err2 != nil || end.Addr <= start.Addr {
				continue
			}
			if data := mem.Slice(start.Addr, end.Addr-start.Addr); data != nil {
				return data, start.Addr, "symbol " + pre + "pclntab", nil
			}
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
	t := &Table{h: h, data: b, l: layoutFor(h.magic, 12, h.rd.ptrSize)}
	if h.magic != magic12 && h.magic != magic116 {
		// Offsets into text: checked through the record's own copy.
		t.l = layoutFor(h.magic, 20, h.rd.ptrSize)
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
		if _, _, err := t.funcAt(i); err != nil || off == 0 {
			return false
		}
	}
	return true
}

// symbolVersion reads runtime.buildVersion, a Go string, when the object
// has symbols: the only record of the release before Go 1.13.
func symbolVersion(obj object.Object, mem *addrspace.Space) string {
	sl, ok := obj.(object.SymbolLookup)
	if !ok {
		return ""
	}
	sym, err := sl.LookupSymbol("runtime.buildVersion")
	if err != nil {
		return ""
	}
	// The string header is two pointers; try both pointer sizes, keeping
	// the one that yields a version-looking string.
	for _, p := range []uint64{8, 4} {
		hdr := mem.Slice(sym.Addr, 2*p)
		if hdr == nil {
			continue
		}
		for _, rd := range []reader{{false, int(p)}, {true, int(p)}} {
			v := buildinfo.String(mem, rd.ptr(hdr), rd.ptr(hdr[p:]))
			if parseMinor(v) > 0 {
				return v
			}
		}
	}
	return ""
}

// guessMinor picks a Go minor version for a table whose release is not
// recorded: the oldest of the magic's range, except that Go 1.2–1.11 and
// 1.12–1.15 records (one magic, two layouts) are told apart by statistics
// over a few records (spec §8.2).
func (t *Table) guessMinor() int {
	lo, _ := minorRange(t.h.magic)
	if t.h.magic != magic12 {
		return lo
	}
	// Little-endian family A stores nfuncdata as an int32 at P+28, so byte
	// P+28 is usually non-zero and P+31 zero; family B keeps funcID (mostly
	// zero) at P+28 and nfuncdata at P+31.
	p := t.h.rd.ptrSize
	votesA, votesB := 0, 0
	n := t.h.nfunc
	for k := uint64(0); k < min(n, 64); k++ {
		i := k * n / min(n, 64)
		off, ok := t.funcOffAt(i)
		if !ok || off > uint64(len(t.h.funcs)) || uint64(len(t.h.funcs))-off < uint64(p+32) {
			continue
		}
		rec := t.h.funcs[off:]
		a, b := rec[p+28], rec[p+31]
		if t.h.rd.bigEndian {
			// Both families put nfuncdata in the last byte; only family
			// B has zero padding in the middle bytes of a non-zero word.
			if rec[p+29] != 0 || rec[p+30] != 0 {
				votesA++
			}
			continue
		}
		switch {
		case a != 0 && b == 0:
			votesA++
		case a == 0 && b != 0:
			votesB++
		}
	}
	if votesB > votesA {
		return 12
	}
	return 11
}

// wrapperCache holds the wrapper funcID of a table whose release is
// unknown, learned from runtime.deferreturn, which every release since 1.14
// marks as a wrapper (spec §6.2).
type wrapperCache struct {
	known bool // the release, hence layout.wrapperID, is known
	once  sync.Once
	id    int
}

// wrapperID returns the funcID of compiler-generated wrappers, -1 if the
// release marks none.
func (t *Table) wrapperID() uint32 {
	if t.wrapper.known || t.h.magic == magic12 {
		return uint32(t.l.wrapperID)
	}
	t.wrapper.once.Do(func() {
		t.wrapper.id = t.l.wrapperID
		if f, err := t.LookupFunction("runtime.deferreturn"); err == nil {
			t.wrapper.id = int(f.funcID())
		}
	})
	return uint32(t.wrapper.id)
}
