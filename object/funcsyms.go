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
	out := syms[:0]
	for i, s := range syms {
		// The executable section that holds s.
		end, in := uint64(0), false
		for _, h := range hs {
			if h.Flags&SectionExec != 0 && h.Addr <= s.Lo && s.Lo-h.Addr < h.Size {
				end, in = h.Addr+h.Size, true
				break
			}
		}
		if !in {
			continue
		}
		if s.Hi == s.Lo {
			s.Hi = end
			for _, n := range syms[i+1:] {
				if n.Lo > s.Lo {
					s.Hi = min(n.Lo, end)
					break
				}
			}
		}
		if s.Hi-s.Lo > math.MaxUint32 {
			continue
		}
		out = append(out, s)
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
