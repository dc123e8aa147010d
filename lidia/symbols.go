package lidia

import (
	"strings"

	"github.com/gosym-dev/gosym/object"
)

// addSymbols adds a depth-0 range for each symbol of syms from index k on
// that starts before limit, cut at limit, unless it starts within an
// earlier range (a Go function, or an earlier symbol) or marks a place
// rather than a function (isMarker). It returns the index of the first
// symbol left.
func (b *builder) addSymbols(syms []object.FuncSymbol, k int, limit uint64) int {
	for ; k < len(syms) && syms[k].Lo < limit; k++ {
		s := syms[k]
		if s.Lo < b.end || isMarker(s.Name) {
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

// isMarker reports whether name is one of the symbols the Go linker puts
// in the text section to mark where Go code starts and ends: runtime.text
// and runtime.etext (text and etext before Go 1.5), and runtime.text.N
// where it splits the text into several sections. They have no size, and
// are not functions: the pclntab has no function there (the bytes after
// runtime.etext are padding, or the C code of a cgo binary, which has
// symbols of its own).
func isMarker(name string) bool {
	switch name {
	case "runtime.text", "runtime.etext", "text", "etext":
		return true
	}
	n, ok := strings.CutPrefix(name, "runtime.text.")
	return ok && n != "" && strings.Trim(n, "0123456789") == ""
}
