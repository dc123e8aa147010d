package elffile

import (
	"debug/elf"
	"fmt"
	"iter"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// Sizes of Elf32_Sym and Elf64_Sym.
const (
	sym32Size = 16
	sym64Size = 24
)

// LookupSymbol returns the symbol called name from the static symbol table
// (.symtab) or, failing that, the dynamic one (.dynsym). Undefined symbols
// and section and file symbols are ignored; where several symbols share a
// name, the first one wins. The first few calls search the tables; later
// ones read a map of the symbols, made on the first of them.
func (f *File) LookupSymbol(name string) (objfile.Symbol, bool, error) {
	return f.syms.LookupEach(name, f.eachLookup)
}

// eachLookup walks the symbols LookupSymbol searches (an objfile.Each):
// those of .symtab, then those of .dynsym. A damaged table does not end
// the walk; the first error is returned at its end.
func (f *File) eachLookup(name string, fn func(objfile.Symbol) bool) error {
	var first error
	for _, typ := range []elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
		t := f.table(typ)
		if t == nil {
			continue
		}
		stopped := false
		err := f.eachSymbol(t, name, func(s objfile.Symbol) bool {
			stopped = !fn(s)
			return !stopped
		})
		if stopped {
			return nil
		}
		if err != nil && first == nil {
			first = formatError("%v: %w", typ, err)
		}
	}
	return first
}

// table returns the symbol table of type typ (SHT_SYMTAB or SHT_DYNSYM),
// or nil. A file has at most one of each type (the ELF specification);
// like debug/elf, the first section of the type is the table, so that a
// damaged file with many cannot make each walk read them all.
func (f *File) table(typ elf.SectionType) *table {
	if t := f.slot(typ); t != nil && t.typ != 0 {
		return t
	}
	return nil
}

// slot returns where the table of type typ is kept, or nil if typ is not
// SHT_SYMTAB or SHT_DYNSYM.
func (f *File) slot(typ elf.SectionType) *table {
	switch typ {
	case elf.SHT_SYMTAB:
		return &f.symtab
	case elf.SHT_DYNSYM:
		return &f.dynsym
	}
	return nil
}

// Symbols yields the symbols of the static symbol table (.symtab) or, if
// the file has none, of the dynamic one (.dynsym), in table order, with the
// same filter as LookupSymbol (but every entry, duplicate names included).
// Func marks STT_FUNC symbols. A table that cannot be read yields an error
// after the symbols read before it.
func (f *File) Symbols() iter.Seq2[objfile.Symbol, error] {
	return func(yield func(objfile.Symbol, error) bool) {
		typ := elf.SHT_SYMTAB
		t := f.table(typ)
		if t == nil {
			typ, t = elf.SHT_DYNSYM, f.table(elf.SHT_DYNSYM)
		}
		if t == nil {
			return
		}
		stopped := false
		err := f.eachSymbol(t, "", func(s objfile.Symbol) bool {
			stopped = !yield(s, nil)
			return !stopped
		})
		if err != nil && !stopped {
			yield(objfile.Symbol{}, formatError("%v: %w", typ, err))
		}
	}
}

// eachSymbol calls fn for each symbol of one symbol table that symbol
// keeps, until fn returns false; if name is not empty, only for those
// called name (see objfile.Each). A symbol whose name is not in the string
// table, or is not NUL-terminated there, is skipped: a bad name spoils
// only its own symbol.
func (f *File) eachSymbol(t *table, name string, fn func(objfile.Symbol) bool) error {
	is64 := f.class == elf.ELFCLASS64
	size := uint64(sym32Size)
	if is64 {
		size = sym64Size
	}
	syms, b, err := f.tableData(t, size)
	if err != nil {
		return err
	}
	strtab := objfile.NewStringTable(b)
	o := f.order
	// Entry 0 is the null symbol. The name is checked first: a walk for
	// one name decodes little else.
	for b := syms[min(size, uint64(len(syms))):]; len(b) > 0; b = b[size:] {
		nameOff := uint64(o.Uint32(b[0:]))
		if nameOff == 0 || name != "" && !strtab.Has(nameOff, name) {
			continue
		}
		var info byte
		var shndx elf.SectionIndex
		var value, symSize uint64
		if is64 {
			info = b[4]
			shndx = elf.SectionIndex(o.Uint16(b[6:]))
			value = o.Uint64(b[8:])
			symSize = o.Uint64(b[16:])
		} else {
			value = uint64(o.Uint32(b[4:]))
			symSize = uint64(o.Uint32(b[8:]))
			info = b[12]
			shndx = elf.SectionIndex(o.Uint16(b[14:]))
		}
		if shndx == elf.SHN_UNDEF {
			continue
		}
		symName := name
		if name == "" {
			var ok bool
			if symName, ok = strtab.Name(nameOff); !ok {
				continue
			}
		}
		if s, ok := symbol(symName, info, shndx, value, symSize); ok && !fn(s) {
			return nil
		}
	}
	return nil
}

// symbol makes a Symbol of a symbol-table entry; ok is false for one that
// is undefined, nameless, or a section or file symbol.
func symbol(name string, info byte, shndx elf.SectionIndex, value, size uint64) (s objfile.Symbol, ok bool) {
	if name == "" || shndx == elf.SHN_UNDEF {
		return s, false
	}
	switch elf.ST_TYPE(info) {
	case elf.STT_SECTION, elf.STT_FILE:
		return s, false
	}
	return objfile.Symbol{Name: name, Addr: value, Size: size, Func: elf.ST_TYPE(info) == elf.STT_FUNC}, true
}

// tableData returns the entries of symbol table t, whose entries are of
// the given size, and the bytes of its string table. A File made by New
// reads them through debug/elf once, and keeps them.
func (f *File) tableData(t *table, size uint64) (syms, strtab []byte, err error) {
	if f.ef == nil {
		if syms, err = entries(f.data, t.off, t.size/size, size); err != nil {
			return nil, nil, err
		}
		if strtab, err = entries(f.data, t.stroff, 1, t.strlen); err != nil {
			return nil, nil, fmt.Errorf("string table: %w", err)
		}
		return syms, strtab, nil
	}
	t.once.Do(func() {
		if t.syms, t.err = t.sec.Data(); t.err != nil || t.strSec == nil {
			return
		}
		if t.strs, t.err = t.strSec.Data(); t.err != nil {
			t.err = fmt.Errorf("string table: %w", t.err)
		}
	})
	if t.err != nil {
		return nil, nil, t.err
	}
	return t.syms[:uint64(len(t.syms))/size*size], t.strs, nil
}
