package elffile

import (
	"debug/elf"
	"errors"
	"fmt"

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
// name, the first one wins. The tables are read on the first call.
func (f *File) LookupSymbol(name string) (objfile.Symbol, bool, error) {
	return f.syms.Lookup(name, f.loadSymbols)
}

// loadSymbols adds the symbols of the symbol tables to f.syms, returning
// the first error.
func (f *File) loadSymbols() error {
	var first error
	if f.ef != nil {
		for _, load := range []func() ([]elf.Symbol, error){f.ef.Symbols, f.ef.DynamicSymbols} {
			syms, err := load()
			if err != nil {
				if !errors.Is(err, elf.ErrNoSymbols) && first == nil {
					first = fmt.Errorf("elfobj: %w", err)
				}
				continue
			}
			for _, s := range syms {
				f.add(s.Name, s.Info, s.Section, s.Value, s.Size)
			}
		}
		return first
	}
	d := decoder{order: f.order, is64: f.class == elf.ELFCLASS64}
	for _, typ := range []elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
		for _, t := range f.tables {
			if t.typ != typ {
				continue
			}
			if err := f.readTable(d, t); err != nil && first == nil {
				first = fmt.Errorf("elfobj: %v: %w", typ, err)
			}
		}
	}
	return first
}

// readTable adds the symbols of one symbol table.
func (f *File) readTable(d decoder, t table) error {
	size := uint64(sym32Size)
	if d.is64 {
		size = sym64Size
	}
	syms, err := entries(f.data, t.off, t.size/size, size)
	if err != nil {
		return err
	}
	strtab, err := entries(f.data, t.stroff, 1, t.strlen)
	if err != nil {
		return fmt.Errorf("string table: %w", err)
	}
	// Entry 0 is the null symbol.
	for b := syms[min(size, uint64(len(syms))):]; len(b) > 0; b = b[size:] {
		var nameOff uint32
		var info byte
		var shndx elf.SectionIndex
		var value, symSize uint64
		if d.is64 {
			nameOff = d.order.Uint32(b[0:])
			info = b[4]
			shndx = elf.SectionIndex(d.order.Uint16(b[6:]))
			value = d.order.Uint64(b[8:])
			symSize = d.order.Uint64(b[16:])
		} else {
			nameOff = d.order.Uint32(b[0:])
			value = uint64(d.order.Uint32(b[4:]))
			symSize = uint64(d.order.Uint32(b[8:]))
			info = b[12]
			shndx = elf.SectionIndex(d.order.Uint16(b[14:]))
		}
		if shndx == elf.SHN_UNDEF || nameOff == 0 {
			continue
		}
		name, ok := cstring(strtab, uint64(nameOff))
		if !ok {
			continue // a bad name spoils only its own symbol
		}
		f.add(name, info, shndx, value, symSize)
	}
	return nil
}

// add records a symbol unless it is undefined, nameless, a section or file
// symbol, or its name is taken.
func (f *File) add(name string, info byte, shndx elf.SectionIndex, value, size uint64) {
	if name == "" || shndx == elf.SHN_UNDEF {
		return
	}
	switch elf.ST_TYPE(info) {
	case elf.STT_SECTION, elf.STT_FILE:
		return
	}
	f.syms.Add(objfile.Symbol{Name: name, Addr: value, Size: size})
}
