package wasmfile

import (
	"iter"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// LookupSymbol returns the function called name from the function names
// of the "name" custom section (Go names with characters other than
// letters, digits, '_' and '.' replaced by '_'). Its Addr is the function's entry PC in the
// Go linker's address model, (FuncValueOffset + i)<<16 for the i-th
// function the module defines (imported functions, which have no Go PC,
// are left out), or PCHighBit | i<<16 in a module of Go 1.28 or later
// (told by its element section, see entryPC). Size is 0. Data symbols are not recorded: the Go linker
// writes none. The first few calls search the section; later ones read a
// map of the symbols, made on the first of them.
func (f *File) LookupSymbol(name string) (objfile.Symbol, bool, error) {
	return f.syms.LookupEach(name, f.eachSymbol)
}

// Symbols yields the function symbols LookupSymbol finds, in the order
// of the name section, each with Func set. On a damaged section it yields
// an error last.
func (f *File) Symbols() iter.Seq2[objfile.Symbol, error] {
	return objfile.Each(f.eachSymbol).Seq()
}

// eachSymbol calls fn with each function named in the name section,
// until fn returns false; if name is not empty, only with those called
// name (an objfile.Each).
func (f *File) eachSymbol(name string, fn func(objfile.Symbol) bool) error {
	r := reader{data: f.names}
	for r.off < uint64(len(r.data)) && r.err == nil {
		id := r.byte()
		sub := reader{data: r.bytes(r.uleb())}
		if id != 1 { // function names
			continue
		}
		n := sub.uleb()
		for i := uint64(0); i < n && sub.err == nil; i++ {
			idx := sub.uleb()
			b := sub.bytes(sub.uleb())
			if sub.err != nil || idx < f.nimport || idx-f.nimport >= f.nfunc || len(b) == 0 {
				continue
			}
			symName := name
			if name == "" {
				symName = string(b)
			} else if string(b) != name {
				continue
			}
			if !fn(objfile.Symbol{Name: symName, Addr: f.pc0 + (idx-f.nimport)<<16, Func: true}) {
				return nil
			}
		}
		if sub.err != nil {
			return formatError("name section: %v", sub.err)
		}
	}
	if r.err != nil {
		return formatError("name section: %v", r.err)
	}
	return nil
}
