package lidia

import "github.com/gosym-dev/gosym/object"

// addSymbols adds a depth-0 range for each symbol of syms from index k on
// that starts before limit, cut at limit, unless it starts within an
// earlier range (a Go function, or an earlier symbol). It returns the index
// of the first symbol left.
func (b *builder) addSymbols(syms []object.FuncSymbol, k int, limit uint64) int {
	for ; k < len(syms) && syms[k].Lo < limit; k++ {
		s := syms[k]
		if s.Lo < b.end {
			continue
		}
		hi := min(s.Hi, limit)
		if hi <= s.Lo {
			continue
		}
		r := record{va: s.Lo, length: uint32(hi - s.Lo), fn: b.str(s.Name)}
		if b.o.lines {
			r.lineIdx = uint32(b.lines.n)
		}
		b.recs.add(r)
		b.end = hi
	}
	return k
}
