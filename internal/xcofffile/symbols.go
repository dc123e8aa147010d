package xcofffile

import (
	"bytes"
	"iter"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// Storage classes of the symbols LookupSymbol finds, and the special
// section numbers.
const (
	classExt     = 2   // C_EXT: external symbol
	classHidExt  = 107 // C_HIDEXT: static (unnamed external) symbol
	classWeakExt = 111 // C_WEAKEXT: weak external symbol
	symTypeFunc  = 0x20
)

// Symbol types of a csect auxiliary entry (x_smtyp & 7).
const (
	xtySD = 1 // section definition: x_scnlen is the csect's length
	xtyLD = 2 // label definition: x_scnlen is the containing csect's index
	xtyCM = 3 // common: x_scnlen is the length
)

// LookupSymbol returns the symbol called name from the symbol table: the
// external, static and weak symbols (C_EXT, C_HIDEXT, C_WEAKEXT) defined
// in a section, with their address (n_value, a virtual address in an
// executable). Size is the function size of the symbol's function
// auxiliary entry, else the length of the csect a section definition or
// common symbol describes, else 0. Where several share a name, the first
// one wins. The first few calls search the table; later ones read a map
// of the symbols, made on the first of them.
func (f *File) LookupSymbol(name string) (objfile.Symbol, bool, error) {
	return f.syms.LookupEach(name, f.eachSymbol)
}

// Symbols yields the symbols LookupSymbol finds, in table order; Func
// marks those whose n_type says function. On a damaged table it yields an
// error last.
func (f *File) Symbols() iter.Seq2[objfile.Symbol, error] {
	return objfile.Each(f.eachSymbol).Seq()
}

// eachSymbol calls fn with each symbol of the symbol table that
// LookupSymbol can find, until fn returns false; if name is not empty,
// only with those called name (an objfile.Each). A symbol whose name is
// not in the string table, or is not NUL-terminated there, is skipped: a
// bad name spoils only its own symbol.
func (f *File) eachSymbol(name string, fn func(objfile.Symbol) bool) error {
	if f.symoff == 0 || f.nsyms == 0 {
		return nil
	}
	if f.nsyms > uint64(len(f.data))/symbolSize {
		return formatError("%d symbols do not fit in the file", f.nsyms)
	}
	tab, err := sub(f.data, f.symoff, f.nsyms*symbolSize, "symbol table")
	if err != nil {
		return err
	}
	strtab := objfile.NewStringTable(f.stringTable(f.symoff + f.nsyms*symbolSize))
	// nameAt reads (or, looking for name, compares) the name at offset off
	// of the string table; offsets below 4 fall in its length field.
	nameAt := func(off uint32) (string, bool) {
		switch {
		case off < 4:
			return "", false
		case name == "":
			return strtab.Name(uint64(off))
		}
		return name, strtab.Has(uint64(off), name)
	}
	for len(tab) >= symbolSize {
		s := tab[:symbolSize]
		naux := int(s[17])
		aux := tab[symbolSize:min(len(tab), (1+naux)*symbolSize)]
		tab = tab[min(len(tab), (1+naux)*symbolSize):]

		class := s[16]
		section := int16(be.Uint16(s[12:]))
		if class != classExt && class != classHidExt && class != classWeakExt ||
			section <= 0 || int(section) > len(f.secs.Headers) {
			continue
		}
		var value uint64
		var symName string
		var ok bool
		if f.is64 {
			value = be.Uint64(s[0:])
			symName, ok = nameAt(be.Uint32(s[8:]))
		} else {
			value = uint64(be.Uint32(s[8:]))
			if be.Uint32(s[0:]) != 0 {
				short := s[:8]
				if i := bytes.IndexByte(short, 0); i >= 0 {
					short = short[:i]
				}
				if name == "" {
					symName, ok = string(short), true
				} else {
					symName, ok = name, string(short) == name
				}
			} else {
				symName, ok = nameAt(be.Uint32(s[4:]))
			}
		}
		if !ok || symName == "" {
			continue
		}
		typ := be.Uint16(s[14:])
		if !fn(objfile.Symbol{Name: symName, Addr: value, Size: f.symbolSize(typ, aux), Func: typ&symTypeFunc != 0}) {
			return nil
		}
	}
	return nil
}

// symbolSize returns the size of a symbol of type typ (n_type) from its
// auxiliary entries: the function auxiliary entry (x_fsize) of a
// function that has one, else the csect length of a section definition or
// common symbol (the csect entry is the last auxiliary entry), else 0.
func (f *File) symbolSize(typ uint16, aux []byte) uint64 {
	n := len(aux) / symbolSize
	if n == 0 {
		return 0
	}
	if typ&symTypeFunc != 0 && n > 1 {
		// x_fsize: offset 8 in XCOFF64's AUX_FCN, 4 in XCOFF32's.
		if f.is64 {
			return uint64(be.Uint32(aux[8:]))
		}
		return uint64(be.Uint32(aux[4:]))
	}
	cs := aux[(n-1)*symbolSize:]
	if smtyp := cs[10] & 7; smtyp != xtySD && smtyp != xtyCM {
		return 0
	}
	if f.is64 {
		// x_scnlen_lo at 0, x_scnlen_hi at 12.
		return uint64(be.Uint32(cs[12:]))<<32 | uint64(be.Uint32(cs[0:]))
	}
	return uint64(be.Uint32(cs[0:]))
}

// stringTable returns the string table at off (after the symbol table):
// its 4-byte length, which counts itself, then the strings. A missing or
// truncated table gives nil or what is there.
func (f *File) stringTable(off uint64) []byte {
	if off > uint64(len(f.data)) || uint64(len(f.data))-off < 4 {
		return nil
	}
	n := uint64(be.Uint32(f.data[off:]))
	return f.data[off:min(uint64(len(f.data)), off+n)]
}
