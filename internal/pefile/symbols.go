package pefile

import (
	"bytes"
	"encoding/binary"
	"iter"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// Special COFF section numbers and storage classes.
const (
	symAbsolute  = -1   // IMAGE_SYM_ABSOLUTE: Value is an address
	symClassFile = 0x67 // IMAGE_SYM_CLASS_FILE: a source file name

	symDTypeFunction = 2 // IMAGE_SYM_DTYPE_FUNCTION, the derived type in bits 4-5 of Type
)

// LookupSymbol returns the symbol called name from the COFF symbol table;
// where several share a name, the first one wins. A COFF symbol's value is
// relative to its section; the returned Addr is absolute (image base plus
// the section's relative address plus the value). Undefined, debug and
// file symbols are ignored, and sizes are not recorded, so Size is 0. The
// first few calls search the table; later ones read a map of the symbols,
// made on the first of them.
func (f *File) LookupSymbol(name string) (objfile.Symbol, bool, error) {
	return f.syms.LookupEach(name, f.eachSymbol)
}

// Symbols yields the symbols of the COFF symbol table, in table order, with
// the same filter and addresses as LookupSymbol (but every entry,
// duplicate names included). Sizes are not recorded; Func marks the
// symbols whose type is a function (IMAGE_SYM_DTYPE_FUNCTION), as the Go
// linker and C compilers write them for code.
func (f *File) Symbols() iter.Seq2[objfile.Symbol, error] {
	return objfile.Each(f.eachSymbol).Seq()
}

// eachSymbol calls fn for each wanted symbol until fn returns false; if
// name is not empty, only for those called name (an objfile.Each).
func (f *File) eachSymbol(name string, fn func(objfile.Symbol) bool) error {
	if f.pf != nil {
		for _, s := range f.pf.Symbols {
			if name != "" && s.Name != name {
				continue
			}
			if sym, ok := f.symbol(s.Name, s.Value, s.SectionNumber, s.Type, s.StorageClass); ok && !fn(sym) {
				return nil
			}
		}
		return nil
	}
	if f.symoff == 0 || f.nsyms == 0 {
		return nil
	}
	return f.readSymbols(name, fn)
}

// readSymbols decodes the COFF symbol table of a File made by NewBytes. A
// symbol whose long name is not in the string table, or is not
// NUL-terminated there, is skipped: a bad name spoils only its own symbol.
func (f *File) readSymbols(name string, fn func(objfile.Symbol) bool) error {
	le := binary.LittleEndian
	if f.nsyms > uint64(len(f.data))/coffSymbolSize {
		return formatError("%d symbols do not fit in the file", f.nsyms)
	}
	tab, err := sub(f.data, f.symoff, f.nsyms*coffSymbolSize, "symbol table")
	if err != nil {
		return err
	}
	// Without a string table (strtab reads as empty), long names are
	// skipped.
	b, _ := f.stringTable()
	strtab := objfile.NewStringTable(b)
	for len(tab) >= coffSymbolSize {
		s := tab[:coffSymbolSize]
		aux := int(s[17]) // NumberOfAuxSymbols
		tab = tab[min(len(tab), (1+aux)*coffSymbolSize):]

		section := int16(le.Uint16(s[12:]))
		class := s[16]
		if !f.wanted(section, class) {
			continue
		}
		symName, ok := name, false
		if le.Uint32(s[0:]) == 0 {
			// A long name: an offset into the string table.
			off := uint64(le.Uint32(s[4:]))
			switch {
			case off < 4:
			case name == "":
				symName, ok = strtab.Name(off)
			default:
				ok = strtab.Has(off, name)
			}
		} else {
			short := s[:8]
			if i := bytes.IndexByte(short, 0); i >= 0 {
				short = short[:i]
			}
			if name == "" {
				symName, ok = string(short), true
			} else {
				ok = string(short) == name
			}
		}
		if !ok {
			continue
		}
		if sym, ok := f.symbol(symName, le.Uint32(s[8:]), section, le.Uint16(s[14:]), class); ok && !fn(sym) {
			return nil
		}
	}
	return nil
}

// wanted reports whether a symbol in section (a 1-based section number or
// a special one) of storage class class is worth recording.
func (f *File) wanted(section int16, class uint8) bool {
	if class == symClassFile {
		return false
	}
	return section == symAbsolute || section > 0 && int(section) <= len(f.secs.Headers)
}

// symbol makes a Symbol of a COFF symbol; ok is false for a nameless or
// unwanted one.
func (f *File) symbol(name string, value uint32, section int16, typ uint16, class uint8) (s objfile.Symbol, ok bool) {
	if name == "" || !f.wanted(section, class) {
		return s, false
	}
	addr := uint64(value)
	if section > 0 {
		// Section addresses already include the image base.
		addr += f.secs.Headers[section-1].Addr
	}
	return objfile.Symbol{Name: name, Addr: addr, Func: typ>>4&3 == symDTypeFunction}, true
}
