package lidia

import (
	"cmp"
	"math"
	"slices"

	"github.com/gosym-dev/gosym/object"
)

// symRange is a function symbol of the object: its name and [lo, hi).
type symRange struct {
	name   string
	lo, hi uint64
}

// funcSymbols returns the function symbols of obj (see
// object.SymbolIterator) that have a name and lie in an executable
// section, sorted by address: where several start at one address, those
// with a size come first (Go 1.5's runtime.etext, of size 0, starts where
// the C code of a cgo binary does), then in table order. A symbol without
// a size (Mach-O, PE and Plan 9 record none; some ELF ones have none)
// extends to the next function symbol or the end of its section. An object
// that cannot list its symbols gives none; a symbol table damaged part of
// the way gives the symbols before the damage.
func funcSymbols(obj object.Object) []symRange {
	it, ok := obj.(object.SymbolIterator)
	if !ok {
		return nil
	}
	hs, err := obj.Sections()
	if err != nil {
		return nil
	}
	var syms []symRange
	for s, err := range it.Symbols() {
		if err != nil {
			break
		}
		if s.Func && s.Name != "" && s.Addr+s.Size >= s.Addr {
			syms = append(syms, symRange{s.Name, s.Addr, s.Addr + s.Size})
		}
	}
	// By address; at one address, symbols with a size first (Go 1.5's
	// runtime.etext, of size 0, starts where the C code does), else in
	// table order.
	sizeless := func(s symRange) bool { return s.hi == s.lo }
	slices.SortStableFunc(syms, func(a, b symRange) int {
		return cmp.Or(cmp.Compare(a.lo, b.lo), boolCompare(sizeless(a), sizeless(b)))
	})
	out := syms[:0]
	for i, s := range syms {
		// The executable section that holds s.
		end, in := uint64(0), false
		for _, h := range hs {
			if h.Flags&object.SectionExec != 0 && h.Addr <= s.lo && s.lo-h.Addr < h.Size {
				end, in = h.Addr+h.Size, true
				break
			}
		}
		if !in {
			continue
		}
		if s.hi == s.lo {
			s.hi = end
			for _, n := range syms[i+1:] {
				if n.lo > s.lo {
					s.hi = min(n.lo, end)
					break
				}
			}
		}
		if s.hi-s.lo > math.MaxUint32 {
			continue
		}
		out = append(out, s)
	}
	return out
}

// addSymbols adds a depth-0 range for each symbol of syms from index k on
// that starts before limit, cut at limit, unless it starts within an
// earlier range (a Go function, or an earlier symbol). It returns the index
// of the first symbol left.
func (b *builder) addSymbols(syms []symRange, k int, limit uint64) int {
	for ; k < len(syms) && syms[k].lo < limit; k++ {
		s := syms[k]
		if s.lo < b.end {
			continue
		}
		hi := min(s.hi, limit)
		if hi <= s.lo {
			continue
		}
		r := record{va: s.lo, length: uint32(hi - s.lo), fn: b.str(s.name)}
		if b.o.lines {
			r.lineIdx = uint32(b.lines.n)
		}
		b.recs.add(r)
		b.end = hi
	}
	return k
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
