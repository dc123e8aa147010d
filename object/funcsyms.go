package object

import (
	"cmp"
	"math"
	"slices"
)

// FuncSymbol is a function symbol of an object's symbol table and the code
// it covers, [Lo, Hi).
type FuncSymbol struct {
	Name   string
	Lo, Hi uint64
}

// FuncSymbols returns the function symbols of obj (see SymbolIterator)
// that have a name and lie in an executable section, sorted by address:
// where several start at one address, those with a size come first (Go
// 1.5's runtime.etext, of size 0, starts where the C code of a cgo binary
// does), then in table order. A symbol without a size (Mach-O, PE and
// Plan 9 record none; some ELF ones have none) extends to the next
// function symbol or the end of its section. An object that cannot list
// its symbols gives none; a symbol table damaged part of the way gives the
// symbols before the damage. It is how the code of a binary that no Go
// function covers (C code of a cgo binary) gets names.
func FuncSymbols(obj Object) []FuncSymbol {
	it, ok := obj.(SymbolIterator)
	if !ok {
		return nil
	}
	hs, err := obj.Sections()
	if err != nil {
		return nil
	}
	var syms []FuncSymbol
	for s, err := range it.Symbols() {
		if err != nil {
			break
		}
		if s.Func && s.Name != "" && s.Addr+s.Size >= s.Addr {
			syms = append(syms, FuncSymbol{s.Name, s.Addr, s.Addr + s.Size})
		}
	}
	sizeless := func(s FuncSymbol) bool { return s.Hi == s.Lo }
	slices.SortStableFunc(syms, func(a, b FuncSymbol) int {
		return cmp.Or(cmp.Compare(a.Lo, b.Lo), boolCompare(sizeless(a), sizeless(b)))
	})
	code := execRanges(hs)
	// next is the address of the first symbol after the current one that
	// starts at a higher address, found walking back from the end, so that
	// the work does not grow with the symbols sharing an address.
	next, nextLo := uint64(math.MaxUint64), uint64(math.MaxUint64)
	for i := len(syms) - 1; i >= 0; i-- {
		s := &syms[i]
		if s.Lo != nextLo {
			next = nextLo
			nextLo = s.Lo
		}
		// The executable code that holds s: the last range starting at
		// or before it.
		j, found := slices.BinarySearchFunc(code, s.Lo, func(r addrRange, lo uint64) int { return cmp.Compare(r.lo, lo) })
		if !found {
			j--
		}
		if j < 0 || s.Lo-code[j].lo >= code[j].hi-code[j].lo {
			s.Lo, s.Hi = 1, 0 // dropped below
			continue
		}
		if s.Hi == s.Lo {
			s.Hi = min(next, code[j].hi)
		}
	}
	out := syms[:0]
	for _, s := range syms {
		if s.Hi >= s.Lo && s.Hi-s.Lo <= math.MaxUint32 {
			out = append(out, s)
		}
	}
	return out
}

// addrRange is the address range [lo, hi).
type addrRange struct{ lo, hi uint64 }

// execRanges returns the address ranges of the executable sections of hs,
// sorted, where sections that overlap make one range (sections that
// touch do not).
func execRanges(hs []SectionHeader) []addrRange {
	var rs []addrRange
	for _, h := range hs {
		if h.Flags&SectionExec != 0 && h.Size > 0 && h.Addr+h.Size > h.Addr {
			rs = append(rs, addrRange{h.Addr, h.Addr + h.Size})
		}
	}
	slices.SortFunc(rs, func(a, b addrRange) int { return cmp.Compare(a.lo, b.lo) })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r.lo < out[n-1].hi {
			out[n-1].hi = max(out[n-1].hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

// boolCompare orders false before true.
func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
