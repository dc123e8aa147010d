package objtest

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/gosym-dev/gosym/object"
)

// CheckBytes checks the invariants of obj, decoded from data by a NewBytes
// function: every section's data is data[Offset:Offset+FileSize] itself,
// not a copy, and an out-of-range index is an error. Symbol lookups must
// succeed or fail with ErrNoSymbol. It is safe on any input, so fuzz
// targets use it.
func CheckBytes(tb testing.TB, data []byte, obj object.Object) {
	tb.Helper()
	CheckBytesIn(tb, data, 0, uint64(len(data)), obj)
}

// CheckBytesIn is CheckBytes for an object that occupies data[lo:hi] (one
// architecture of a universal file): a section must lie within it.
func CheckBytesIn(tb testing.TB, data []byte, lo, hi uint64, obj object.Object) {
	tb.Helper()
	if obj.Endian() == nil {
		tb.Error("Endian() = nil")
	}
	hs, err := obj.Sections()
	if err != nil {
		tb.Fatalf("Sections: %v", err)
	}
	wasm := false
	if d, ok := obj.(object.Describer); ok {
		wasm = d.Format() == "wasm"
	}
	for i, h := range hs {
		b, err := obj.SectionData(i)
		if wasm && i == len(hs)-1 && h.Name == "linear memory" {
			// Assembled from the data segments: not in the file.
			if err != nil || uint64(len(b)) != h.FileSize || h.Offset != 0 {
				tb.Errorf("linear memory: %d bytes, %v; want FileSize %d at offset 0", len(b), err, h.FileSize)
			}
			continue
		}
		inFile := h.FileSize == 0 || h.Offset >= lo && h.Offset <= hi && h.FileSize <= hi-h.Offset
		if err != nil {
			if inFile {
				tb.Errorf("SectionData(%d) (%q, offset %#x size %#x in %#x bytes): %v", i, h.Name, h.Offset, h.FileSize, len(data), err)
			}
			continue
		}
		if !inFile {
			tb.Errorf("SectionData(%d) (%q, offset %#x size %#x) succeeded outside the object's bytes [%#x, %#x)", i, h.Name, h.Offset, h.FileSize, lo, hi)
			continue
		}
		if uint64(len(b)) != h.FileSize {
			tb.Errorf("SectionData(%d) (%q): %d bytes, want FileSize %d", i, h.Name, len(b), h.FileSize)
			continue
		}
		if len(b) > 0 && &b[0] != &data[h.Offset] {
			tb.Errorf("SectionData(%d) (%q) is a copy, not data[%#x:]", i, h.Name, h.Offset)
		}
	}
	for _, i := range []int{-1, len(hs)} {
		if _, err := obj.SectionData(i); err == nil {
			tb.Errorf("SectionData(%d) of %d sections succeeded", i, len(hs))
		}
	}
	if l, ok := obj.(object.SymbolLookup); ok {
		for _, name := range []string{"runtime.text", "runtime.pclntab", "", "no such symbol"} {
			if _, err := l.LookupSymbol(name); err != nil && !errors.Is(err, object.ErrNoSymbol) {
				tb.Errorf("LookupSymbol(%q): %v, want ErrNoSymbol", name, err)
			}
		}
	}
	if it, ok := obj.(object.SymbolIterator); ok {
		// Every symbol comes from an entry of the file, an error ends
		// the sequence, and breaking out of it stops it.
		n, failed := 0, false
		var first []object.Symbol // the first of each name, up to 12
		for s, err := range it.Symbols() {
			if failed {
				tb.Fatalf("Symbols yields %+v, %v after an error", s, err)
			}
			failed = err != nil
			if n++; n > len(data) {
				tb.Fatalf("Symbols yields more than %d symbols from %d bytes", n, len(data))
			}
			if err == nil && len(first) < 12 && !slices.ContainsFunc(first, func(f object.Symbol) bool { return f.Name == s.Name }) {
				first = append(first, s)
			}
		}
		for range it.Symbols() {
			break
		}
		// LookupSymbol finds the first symbol of each name, both while it
		// searches the table and once it reads its map (after a few
		// lookups).
		if l, ok := obj.(object.SymbolLookup); ok {
			for _, w := range first {
				if s, err := l.LookupSymbol(w.Name); err != nil || s != w {
					tb.Errorf("Symbols yields %+v first, LookupSymbol finds %+v, %v", w, s, err)
				}
			}
		}
	}
	if d, ok := obj.(object.Describer); ok {
		_, _ = d.Format(), d.Arch()
	}
}

// CheckTarget checks that obj says it is a file of the given format for
// tg: its Format, Arch and Endian.
func CheckTarget(tb testing.TB, obj object.Object, format string, tg Target) {
	tb.Helper()
	if obj.Endian() != tg.ByteOrder() {
		tb.Errorf("Endian() = %v, want %v", obj.Endian(), tg.ByteOrder())
	}
	d := obj.(object.Describer)
	if d.Format() != format || d.Arch() != tg.GOARCH {
		tb.Errorf("Format, Arch = %q, %q; want %q, %q", d.Format(), d.Arch(), format, tg.GOARCH)
	}
}

// Flags returns the flags of a section that is allocated, executable and
// writable as alloc, exec and write say.
func Flags(alloc, exec, write bool) object.SectionFlags {
	var f object.SectionFlags
	if alloc {
		f |= object.SectionAlloc
	}
	if exec {
		f |= object.SectionExec
	}
	if write {
		f |= object.SectionWrite
	}
	return f
}

// CheckSections checks that the sections of obj are want.
func CheckSections(tb testing.TB, obj object.Object, want []object.SectionHeader) {
	tb.Helper()
	got, err := obj.Sections()
	if err != nil {
		tb.Fatalf("Sections: %v", err)
	}
	CompareSections(tb, got, want)
}

// CompareSections reports the differences between got and want.
func CompareSections(tb testing.TB, got, want []object.SectionHeader) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Errorf("%d sections, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			tb.Errorf("section %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// CompareData checks that every section of obj holds the bytes that want
// returns for it.
func CompareData(tb testing.TB, obj object.Object, want func(i int) ([]byte, error)) {
	tb.Helper()
	hs, err := obj.Sections()
	if err != nil {
		tb.Fatal(err)
	}
	for i, h := range hs {
		got, err := obj.SectionData(i)
		if err != nil {
			tb.Errorf("SectionData(%d) (%q): %v", i, h.Name, err)
			continue
		}
		w, err := want(i)
		if err != nil {
			tb.Errorf("section %d (%q): reading with the standard library: %v", i, h.Name, err)
			continue
		}
		if !bytes.Equal(got, w) {
			tb.Errorf("SectionData(%d) (%q): %d bytes differ from the standard library's %d", i, h.Name, len(got), len(w))
		}
	}
}

// FirstByName returns the first symbol of each name in syms, in order:
// where a symbol table repeats a name, LookupSymbol finds the first.
func FirstByName(syms []object.Symbol) []object.Symbol {
	var first []object.Symbol
	seen := make(map[string]bool)
	for _, s := range syms {
		if !seen[s.Name] {
			seen[s.Name] = true
			first = append(first, s)
		}
	}
	return first
}

// CompareSymbols checks that LookupSymbol of each object finds every
// symbol of want, which holds one symbol of each name (see FirstByName),
// and that it returns ErrNoSymbol for a name that is not there.
func CompareSymbols(tb testing.TB, want []object.Symbol, objs ...object.Object) {
	tb.Helper()
	for _, obj := range objs {
		l := obj.(object.SymbolLookup)
		for _, w := range want {
			s, err := l.LookupSymbol(w.Name)
			if f := s.Func; err != nil || !sameSymbol(s, w) {
				tb.Errorf("LookupSymbol(%q) = %+v, %v; want %#x size %d", w.Name, s, err, w.Addr, w.Size)
			} else if f {
				CheckSymbolIn(tb, obj, w.Name, object.SectionExec)
			}
		}
		if _, err := l.LookupSymbol("runtime.nosuchsymbol"); !errors.Is(err, object.ErrNoSymbol) {
			tb.Errorf("LookupSymbol of a missing symbol: %v, want ErrNoSymbol", err)
		}
		compareIterated(tb, want, obj)
	}
}

// sameSymbol reports whether s is w, whatever their Func (which the
// standard library's symbols, want's source, do not say).
func sameSymbol(s, w object.Symbol) bool {
	s.Func, w.Func = false, false
	return s == w
}

// compareIterated checks the symbols obj's Symbols yields against want
// (the standard library's, first of each name) and against LookupSymbol:
// no error; the first symbol of each name is the one LookupSymbol finds
// and want holds; every name of want is there, except, for ELF, names
// only in .dynsym (Symbols reads .symtab alone when there is one).
// Func must mark the test program's function main.work and not its
// variable main.counter, and only symbols in executable sections.
func compareIterated(tb testing.TB, want []object.Symbol, obj object.Object) {
	tb.Helper()
	it, ok := obj.(object.SymbolIterator)
	if !ok {
		tb.Errorf("%T does not implement SymbolIterator", obj)
		return
	}
	var syms []object.Symbol
	for s, err := range it.Symbols() {
		if err != nil {
			tb.Errorf("Symbols: %v", err)
			return
		}
		syms = append(syms, s)
	}
	wantBy := make(map[string]object.Symbol, len(want))
	for _, w := range want {
		wantBy[w.Name] = w
	}
	first := FirstByName(syms)
	for _, s := range first {
		w, ok := wantBy[s.Name]
		if !ok || !sameSymbol(s, w) {
			tb.Errorf("Symbols yields %+v, want %+v (%v)", s, w, ok)
			continue
		}
		if l, err := obj.(object.SymbolLookup).LookupSymbol(s.Name); err != nil || l != s {
			tb.Errorf("Symbols yields %+v, LookupSymbol finds %+v, %v", s, l, err)
		}
	}
	format := ""
	if d, ok := obj.(object.Describer); ok {
		format = d.Format()
	}
	if len(first) != len(want) && (format != "elf" || len(first) < 100) {
		tb.Errorf("Symbols yields %d names, want %d", len(first), len(want))
	}
	hs, _ := obj.Sections()
	funcs := 0
	for _, s := range syms {
		if !s.Func {
			continue
		}
		funcs++
		in := false
		for _, h := range hs {
			in = in || h.Flags&object.SectionExec != 0 && h.Addr <= s.Addr && s.Addr <= h.Addr+h.Size
		}
		if !in {
			tb.Errorf("function symbol %s at %#x is in no executable section", s.Name, s.Addr)
		}
	}
	for _, s := range first {
		if (s.Name == "main.work" && !s.Func) || (s.Name == "main.counter" && s.Func) {
			tb.Errorf("Symbols yields %+v", s)
		}
	}
	tb.Logf("Symbols: %d symbols, %d names (%d looked up), %d functions", len(syms), len(first), len(want), funcs)
	if funcs < len(syms)/10 {
		tb.Errorf("%d function symbols of %d", funcs, len(syms))
	}
}

// FindSection returns the index of the first section called name, or -1.
func FindSection(hs []object.SectionHeader, name string) int {
	for i, h := range hs {
		if h.Name == name {
			return i
		}
	}
	return -1
}

// CheckSymbolIn looks up the symbol called name in obj and checks that it
// lies in a section of obj that has flags.
func CheckSymbolIn(tb testing.TB, obj object.Object, name string, flags object.SectionFlags) object.Symbol {
	tb.Helper()
	s, err := obj.(object.SymbolLookup).LookupSymbol(name)
	if err != nil {
		tb.Fatalf("LookupSymbol(%q): %v", name, err)
	}
	hs, _ := obj.Sections()
	for _, h := range hs {
		if h.Addr <= s.Addr && s.Addr < h.Addr+h.Size && h.Flags&flags == flags {
			return s
		}
	}
	tb.Errorf("%s at %#x is in no section with flags %#x", name, s.Addr, flags)
	return s
}

// PclntabAt checks that the Go symbol table starts at address addr of obj:
// the bytes there must hold a pclntab header whose magic is in the byte
// order obj.Endian reports, followed by two zero bytes, the instruction
// size quantum (1, 2 or 4) and the pointer size (4 or 8).
func PclntabAt(tb testing.TB, obj object.Object, addr uint64) {
	tb.Helper()
	hs, err := obj.Sections()
	if err != nil {
		tb.Fatal(err)
	}
	for i, h := range hs {
		if addr < h.Addr || addr-h.Addr+8 > h.FileSize {
			continue
		}
		data, err := obj.SectionData(i)
		if err != nil {
			tb.Fatal(err)
		}
		b := data[addr-h.Addr:]
		switch obj.Endian().Uint32(b) {
		case 0xfffffffb, 0xfffffffa, 0xfffffff0, 0xfffffff1:
			if b[4] == 0 && b[5] == 0 && (b[6] == 1 || b[6] == 2 || b[6] == 4) && (b[7] == 4 || b[7] == 8) {
				return
			}
		}
		tb.Errorf("no %v pclntab header at %#x in section %d (%q): % x", obj.Endian(), addr, i, h.Name, b[:8])
		return
	}
	tb.Errorf("address %#x is in no section's file data", addr)
}
