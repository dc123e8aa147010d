package machofile

import (
	"iter"
	"strings"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// Fields of an nlist's n_type.
const (
	nStab = 0xe0 // debugging entry if any bit is set
	nType = 0x0e
	nAbs  = 0x02
	nSect = 0x0e
)

// LookupSymbol returns the symbol called name from the symbol table
// (LC_SYMTAB); where several share a name, the first one wins. The Go
// linker prefixes every symbol with "_", as C compilers do on Darwin;
// like debug/macho, LookupSymbol drops the prefix from names containing a
// dot, so Go symbols are found by their Go names ("runtime.pclntab") and C
// symbols by their stored names ("_main"). Debugging entries and undefined
// symbols are ignored, and sizes are not recorded, so Size is 0. The
// first few calls search the table; later ones read a map of the symbols,
// made on the first of them.
func (f *File) LookupSymbol(name string) (objfile.Symbol, bool, error) {
	return f.syms.LookupEach(name, f.eachSymbol)
}

// Symbols yields the symbols of the symbol table, in table order, with the
// same filter and names as LookupSymbol (but every entry, duplicate names
// included). The format has no symbol sizes and no function type: Func
// marks the symbols defined in a section that holds instructions.
func (f *File) Symbols() iter.Seq2[objfile.Symbol, error] {
	return objfile.Each(f.eachSymbol).Seq()
}

// eachSymbol calls fn for each wanted symbol until fn returns false; if
// name is not empty, only for those called name (an objfile.Each).
func (f *File) eachSymbol(name string, fn func(objfile.Symbol) bool) error {
	if f.mf != nil {
		if f.mf.Symtab != nil {
			for _, s := range f.mf.Symtab.Syms {
				if name != "" && s.Name != name { // debug/macho applies goName
					continue
				}
				if sym, ok := f.symbol(s.Name, s.Type, s.Sect, s.Value); ok && !fn(sym) {
					return nil
				}
			}
		}
		return nil
	}
	if f.symtab == nil {
		return nil
	}
	return f.readSymbols(f.symtab, name, fn)
}

// readSymbols decodes the nlist entries of a File made by NewBytes. A
// symbol whose name is not in the string table, or is not NUL-terminated
// there, is skipped: a bad name spoils only its own symbol.
func (f *File) readSymbols(st *symtabCmd, name string, fn func(objfile.Symbol) bool) error {
	size := uint64(nlist32Size)
	if f.is64 {
		size = nlist64Size
	}
	if st.nsyms > uint64(len(f.data))/size {
		return formatError("%d symbols do not fit in the file", st.nsyms)
	}
	n := st.nsyms * size
	if st.symoff > uint64(len(f.data)) || n > uint64(len(f.data))-st.symoff {
		return formatError("symbol table at %#x size %#x extends beyond the file (%#x bytes)", st.symoff, n, len(f.data))
	}
	if st.stroff > uint64(len(f.data)) || st.strsize > uint64(len(f.data))-st.stroff {
		return formatError("string table at %#x size %#x extends beyond the file (%#x bytes)", st.stroff, st.strsize, len(f.data))
	}
	strtab := objfile.NewStringTable(f.data[st.stroff : st.stroff+st.strsize])
	// A name is found as goName gives it: stored as it is, or with a "_"
	// before it when it has a dot.
	asStored := goName(name) == name
	underscored := strings.Contains(name, ".")
	o := f.order
	for b := f.data[st.symoff : st.symoff+n]; len(b) > 0; b = b[size:] {
		strx := uint64(o.Uint32(b))
		typ, sect := b[4], b[5]
		var value uint64
		if size == nlist64Size {
			value = o.Uint64(b[8:])
		} else {
			value = uint64(o.Uint32(b[8:]))
		}
		if !wanted(typ) || strx == 0 {
			continue
		}
		symName, ok := name, false
		if name == "" {
			symName, ok = strtab.Name(strx)
			symName = goName(symName)
		} else {
			ok = asStored && strtab.Has(strx, name) || underscored && strtab.HasPrefixed(strx, "_", name)
		}
		if !ok {
			continue
		}
		if s, ok := f.symbol(symName, typ, sect, value); ok && !fn(s) {
			return nil
		}
	}
	return nil
}

// goName removes the underscore the Go linker puts before Go symbol
// names, recognized as debug/macho does by a dot in the name (issue 33808).
func goName(name string) string {
	if len(name) > 0 && name[0] == '_' && strings.Contains(name, ".") {
		return name[1:]
	}
	return name
}

// wanted reports whether a symbol of type typ is defined (in a section or
// absolute) and not a debugging entry.
func wanted(typ uint8) bool {
	return typ&nStab == 0 && (typ&nType == nSect || typ&nType == nAbs)
}

// symbol makes a Symbol of an nlist entry; ok is false for an unwanted or
// nameless one. sect is the entry's 1-based section number.
func (f *File) symbol(name string, typ, sect uint8, value uint64) (s objfile.Symbol, ok bool) {
	if name == "" || !wanted(typ) {
		return s, false
	}
	s = objfile.Symbol{Name: name, Addr: value}
	if typ&nType == nSect && sect > 0 && int(sect) <= len(f.secs.Headers) {
		s.Func = f.secs.Headers[sect-1].Flags&objfile.SectionExec != 0
	}
	return s, true
}
