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
//
// A .dynsym of hashMinSymbols symbols or more that has a GNU hash table
// (.gnu.hash) is searched through it, as the dynamic linker does (see
// hashLookup), in a file made by NewBytes: without a .symtab, every
// lookup then costs the same whatever the size of the table, and no map
// is made.
func (f *File) LookupSymbol(name string) (objfile.Symbol, bool, error) {
	if name != "" && f.table(elf.SHT_SYMTAB) == nil {
		if t := f.table(elf.SHT_DYNSYM); t != nil {
			if h, ok := f.hashTable(t); ok {
				return f.lookupHashed(t, h, name)
			}
		}
	}
	return f.syms.LookupEach(name, f.eachLookup)
}

// lookupHashed returns the first symbol called name that hashLookup finds
// in the .dynsym t.
func (f *File) lookupHashed(t *table, h gnuHash, name string) (objfile.Symbol, bool, error) {
	var found objfile.Symbol
	ok := false
	err := f.hashLookup(t, h, name, func(s objfile.Symbol) bool {
		found, ok = s, true
		return false
	})
	if ok {
		return found, true, nil
	}
	if err != nil {
		return objfile.Symbol{}, false, formatError("%v: %w", elf.SHT_DYNSYM, err)
	}
	return objfile.Symbol{}, false, nil
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
		visit := func(s objfile.Symbol) bool {
			stopped = !fn(s)
			return !stopped
		}
		var err error
		if h, ok := f.hashTable(t); ok && name != "" {
			err = f.hashLookup(t, h, name, visit)
		} else {
			err = f.eachSymbol(t, name, visit)
		}
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
	size := f.symSize()
	syms, b, err := f.tableData(t, size)
	if err != nil {
		return err
	}
	strtab := objfile.NewStringTable(b)
	if name != "" {
		// One name: the entries and the names it compares are read
		// through windows (see window).
		sw, nw, _, lb := f.windows(syms, b, nil)
		defer lb.release()
		for off := size; off+size <= uint64(len(syms)); off += size {
			if s, ok := f.entry(sw.at(off, size), &strtab, &nw, name); ok && !fn(s) {
				return nil
			}
		}
		return nil
	}
	// Entry 0 is the null symbol.
	for b := syms[min(size, uint64(len(syms))):]; len(b) > 0; b = b[size:] {
		if s, ok := f.entry(b, &strtab, nil, name); ok && !fn(s) {
			return nil
		}
	}
	return nil
}

// symSize returns the size of the file's symbol-table entries.
func (f *File) symSize() uint64 {
	if f.class == elf.ELFCLASS64 {
		return sym64Size
	}
	return sym32Size
}

// entry decodes the symbol-table entry at the start of b, whose names are
// in strtab, as eachSymbol keeps it: ok is false for one that symbol
// drops, or, if name is not empty, one not called name, which is compared
// through names, a window on strtab. The name is checked last: an entry
// dropped for its other fields costs no read of the string table.
func (f *File) entry(b []byte, strtab *objfile.StringTable, names *window, name string) (objfile.Symbol, bool) {
	o := f.order
	nameOff := uint64(o.Uint32(b[0:]))
	if nameOff == 0 {
		return objfile.Symbol{}, false
	}
	var info byte
	var shndx elf.SectionIndex
	var value, symSize uint64
	if f.class == elf.ELFCLASS64 {
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
	if !keep(info, shndx) || name != "" && !names.has(nameOff, name) {
		return objfile.Symbol{}, false
	}
	symName := name
	if name == "" {
		var ok bool
		if symName, ok = strtab.Name(nameOff); !ok {
			return objfile.Symbol{}, false
		}
	}
	return symbol(symName, info, shndx, value, symSize)
}

// hashMinSymbols is the size of a .dynsym from which LookupSymbol reads its
// GNU hash table rather than walking it: where a walk is cheap, answers do
// not depend on the hash table at all.
const hashMinSymbols = 1 << 10

// A gnuHash is the GNU hash table (SHT_GNU_HASH) of a .dynsym: the index by
// name the dynamic linker searches. It leaves out the first symOffset
// entries; the others are grouped by bucket, the hash of their name modulo
// the bucket count. buckets gives the first entry of each bucket (0: none),
// and chain, for each entry from symOffset on, the hash of its name with
// the low bit set on the last entry of its bucket. (The Bloom filter that
// precedes the buckets is not read: it only saves the dynamic linker a
// miss.)
type gnuHash struct {
	symOffset uint64
	nsyms     uint64 // entries in the .dynsym
	buckets   []byte // uint32s
	chain     []byte // uint32s, one for each entry from symOffset on
}

// hashTable returns the GNU hash table of the .dynsym t; ok is false if it
// has none, or fewer than hashMinSymbols entries, or one that does not fit
// its section or that does not give a chain word to each entry it indexes.
// Only a File made by NewBytes reads it.
func (f *File) hashTable(t *table) (h gnuHash, ok bool) {
	if f.ef != nil || t.typ != elf.SHT_DYNSYM || t.hashSize < 16 {
		return h, false
	}
	h.nsyms = t.size / f.symSize()
	if h.nsyms < hashMinSymbols {
		return h, false
	}
	b, err := entries(f.data, nil, t.hashOff, 1, t.hashSize)
	if err != nil {
		return h, false
	}
	// The header is read through the copier; b stays a slice of the
	// mapping.
	head := b
	if f.copier != nil {
		var hb [16]byte
		if f.copier.Copy(hb[:], b) == len(hb) {
			head = hb[:]
		}
	}
	o := f.order
	nbuckets, bloomWords := uint64(o.Uint32(head)), uint64(o.Uint32(head[8:]))
	h.symOffset = uint64(o.Uint32(head[4:]))
	word := uint64(4)
	if f.class == elf.ELFCLASS64 {
		word = 8
	}
	// The counts are 32 bits: these sums cannot overflow.
	start := 16 + bloomWords*word
	end := start + nbuckets*4
	if nbuckets == 0 || h.symOffset == 0 || h.symOffset > h.nsyms || end+(h.nsyms-h.symOffset)*4 > uint64(len(b)) {
		return h, false
	}
	h.buckets = b[start:end]
	h.chain = b[end : end+(h.nsyms-h.symOffset)*4]
	return h, true
}

// hashLookup is eachSymbol for one name of the .dynsym t, through its hash
// table h: it walks the entries h leaves out (1 to symOffset), then only
// those of name's bucket whose chain word matches name's hash, in table
// order, as the dynamic linker does. An entry the hash table does not
// list where name's hash puts it is not found.
func (f *File) hashLookup(t *table, h gnuHash, name string, fn func(objfile.Symbol) bool) error {
	size := f.symSize()
	syms, b, err := f.tableData(t, size)
	if err != nil {
		return err
	}
	strtab := objfile.NewStringTable(b)
	// The entries, names and words compared are read through windows
	// (see window).
	sw, nw, cw, lb := f.windows(syms, b, h.chain)
	defer lb.release()
	for i := uint64(1); i < h.symOffset; i++ {
		if s, ok := f.entry(sw.at(i*size, size), &strtab, &nw, name); ok && !fn(s) {
			return nil
		}
	}
	o := f.order
	hash := gnuHashOf(name)
	nbuckets := uint64(len(h.buckets) / 4)
	// The bucket's word, through the chain's window: the chain is read
	// after it.
	bw := cw
	bw.src = h.buckets
	if bw.chunk != nil {
		bw.chunk = bw.chunk[:4]
	}
	first := uint64(o.Uint32(bw.at(uint64(hash)%nbuckets*4, 4)))
	if first < h.symOffset {
		return nil // an empty bucket (0), or a damaged one
	}
	// Each entry ends the walk or moves it on: at most one step per entry.
	for i := first; i < h.nsyms; i++ {
		c := o.Uint32(cw.at((i-h.symOffset)*4, 4))
		if c|1 == hash|1 {
			if s, ok := f.entry(sw.at(i*size, size), &strtab, &nw, name); ok && !fn(s) {
				return nil
			}
		}
		if c&1 != 0 {
			break
		}
	}
	return nil
}

// gnuHashOf returns the GNU hash of a symbol name (the ELF gABI extension's
// dl_new_hash: h = h*33 + c from 5381).
func gnuHashOf(name string) uint32 {
	h := uint32(5381)
	for i := 0; i < len(name); i++ {
		h = h*33 + uint32(name[i])
	}
	return h
}

// symbol makes a Symbol of a symbol-table entry; ok is false for one that
// is undefined, nameless, or a section or file symbol.
func symbol(name string, info byte, shndx elf.SectionIndex, value, size uint64) (s objfile.Symbol, ok bool) {
	if name == "" || !keep(info, shndx) {
		return s, false
	}
	return objfile.Symbol{Name: name, Addr: value, Size: size, Func: elf.ST_TYPE(info) == elf.STT_FUNC}, true
}

// keep reports whether a symbol of this type and section is one symbol
// keeps: neither undefined nor a section or file symbol.
func keep(info byte, shndx elf.SectionIndex) bool {
	switch elf.ST_TYPE(info) {
	case elf.STT_SECTION, elf.STT_FILE:
		return false
	}
	return shndx != elf.SHN_UNDEF
}

// tableData returns the entries of symbol table t, whose entries are of
// the given size, and the bytes of its string table. A File made by New
// reads them through debug/elf once, and keeps them.
func (f *File) tableData(t *table, size uint64) (syms, strtab []byte, err error) {
	if f.ef == nil {
		if syms, err = entries(f.data, nil, t.off, t.size/size, size); err != nil {
			return nil, nil, err
		}
		if strtab, err = entries(f.data, nil, t.stroff, 1, t.strlen); err != nil {
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
