package oracle

import (
	"bytes"
	"debug/elf"
	"debug/gosym"
	"debug/macho"
	"debug/pe"
	"debug/plan9obj"
	"errors"
	"fmt"
)

// Stdlib answers symbol-table queries with the standard library's
// debug/gosym, fed the way Go's own cmd/internal/objfile feeds it (as used
// by go tool objdump, addr2line and pprof). It reports exactly what
// debug/gosym reports, deviations included; see the package comment.
type Stdlib struct {
	// Table is the debug/gosym table built from the binary.
	Table *gosym.Table
	// TextStart is the address passed to gosym.NewLineTable.
	TextStart uint64
}

// NewStdlib locates the pclntab (and, when present, the symtab) and the
// start of the text in the ELF, Mach-O (thin), PE or Plan 9 file in data
// and builds a gosym.Table from them:
//
//   - ELF: section .gopclntab or .data.rel.ro.gopclntab, else the bytes
//     between the symbols runtime.pclntab and runtime.epclntab read
//     through the program headers; symtab from .gosymtab or
//     .data.rel.ro.gosymtab; text start = address of .text.
//   - Mach-O: sections __gopclntab and __gosymtab; text start = __text.
//   - PE: the bytes between symbols runtime.pclntab and runtime.epclntab
//     (pclntab and epclntab up to Go 1.3), likewise runtime.symtab and
//     runtime.esymtab; text start = ImageBase + VirtualAddress of .text.
//   - Plan 9: the same symbols, located in the text segment; text start =
//     LoadAddress + HdrSize.
//   - XCOFF (64-bit, AIX): the bytes between the symbols runtime.pclntab
//     and runtime.epclntab; text start = address of .text.
//
// In every format the address of the symbol runtime.text, when the file
// has it, overrides the text start, as cmd/internal/objfile does.
//
// Only Go 1.2 binaries have a non-empty symtab. Given one, debug/gosym
// takes the function list from it instead of from the pclntab (see the
// package comment); NewStdlibPclntab avoids that.
func NewStdlib(data []byte) (*Stdlib, error) {
	return newStdlib(data, true)
}

// NewStdlibPclntab is NewStdlib without the symtab, as the current
// cmd/internal/objfile does it: debug/gosym then takes function names and
// extents from the pclntab alone. It differs from NewStdlib only for Go 1.2
// binaries.
func NewStdlibPclntab(data []byte) (*Stdlib, error) {
	return newStdlib(data, false)
}

func newStdlib(data []byte, useSymtab bool) (*Stdlib, error) {
	var (
		text, symText uint64
		symtab, pcln  []byte
		err           error
	)
	r := bytes.NewReader(data)
	switch {
	case bytes.HasPrefix(data, []byte(elf.ELFMAG)):
		text, symText, symtab, pcln, err = elfTables(r)
	case bytes.HasPrefix(data, []byte("MZ")):
		text, symText, symtab, pcln, err = peTables(r)
	case isXCOFF64(data):
		text, symText, symtab, pcln, err = xcoffTables(data)
	default:
		if f, merr := macho.NewFile(r); merr == nil {
			text, symText, symtab, pcln, err = machoTables(f)
		} else if f, perr := plan9obj.NewFile(r); perr == nil {
			text, symText, symtab, pcln, err = plan9Tables(f)
		} else {
			return nil, errors.New("oracle: not an ELF, Mach-O, PE, Plan 9 or XCOFF file")
		}
	}
	if err != nil {
		return nil, err
	}
	if pcln == nil {
		return nil, errors.New("oracle: no pclntab found")
	}
	if symText != 0 {
		text = symText
	}
	if !useSymtab {
		symtab = nil
	}
	t, err := gosym.NewTable(symtab, gosym.NewLineTable(pcln, text))
	if err != nil {
		return nil, err
	}
	return &Stdlib{Table: t, TextStart: text}, nil
}

// Funcs returns the functions debug/gosym knows, in table order, with
// Low = Entry and High = End.
func (s *Stdlib) Funcs() []Func {
	fs := make([]Func, len(s.Table.Funcs))
	for i, f := range s.Table.Funcs {
		fs[i] = Func{Name: f.Name, Low: f.Entry, High: f.End}
	}
	return fs
}

// PCToLine returns what gosym.Table.PCToLine returns for pc: the file and
// line of the innermost inlined call at pc, and the name of the physical
// (outermost) function. fn is "" when no function contains pc.
func (s *Stdlib) PCToLine(pc uint64) (file string, line int, fn string) {
	file, line, f := s.Table.PCToLine(pc)
	if f != nil {
		fn = f.Name
	}
	return file, line, fn
}

func elfTables(r *bytes.Reader) (text, symText uint64, symtab, pcln []byte, err error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return
	}
	if s := f.Section(".text"); s != nil {
		text = s.Addr
	}
	syms, _ := f.Symbols()
	addr := func(name string) uint64 {
		for _, s := range syms {
			if s.Name == name {
				return s.Value
			}
		}
		return 0
	}
	symText = addr("runtime.text")
	section := func(names ...string) ([]byte, error) {
		for _, n := range names {
			if s := f.Section(n); s != nil && s.Type != elf.SHT_NOBITS {
				return s.Data()
			}
		}
		return nil, nil
	}
	if symtab, err = section(".gosymtab", ".data.rel.ro.gosymtab"); err != nil {
		return
	}
	if pcln, err = section(".gopclntab", ".data.rel.ro.gopclntab"); err != nil || pcln != nil {
		return
	}
	// External-link PIE: no section of its own; read through the segments.
	lo, hi := addr("runtime.pclntab"), addr("runtime.epclntab")
	if lo == 0 || hi <= lo {
		return
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Vaddr <= lo && hi <= p.Vaddr+p.Filesz {
			pcln = make([]byte, hi-lo)
			_, err = p.ReadAt(pcln, int64(lo-p.Vaddr))
			return
		}
	}
	return
}

func machoTables(f *macho.File) (text, symText uint64, symtab, pcln []byte, err error) {
	if s := f.Section("__text"); s != nil {
		text = s.Addr
	}
	if f.Symtab != nil {
		for _, s := range f.Symtab.Syms {
			if s.Name == "runtime.text" {
				symText = s.Value
				break
			}
		}
	}
	if s := f.Section("__gosymtab"); s != nil {
		if symtab, err = s.Data(); err != nil {
			return
		}
	}
	if s := f.Section("__gopclntab"); s != nil {
		pcln, err = s.Data()
	}
	return
}

func peTables(r *bytes.Reader) (text, symText uint64, symtab, pcln []byte, err error) {
	f, err := pe.NewFile(r)
	if err != nil {
		return
	}
	var base uint64
	switch h := f.OptionalHeader.(type) {
	case *pe.OptionalHeader32:
		base = uint64(h.ImageBase)
	case *pe.OptionalHeader64:
		base = h.ImageBase
	}
	if s := f.Section(".text"); s != nil {
		text = base + uint64(s.VirtualAddress)
	}
	// COFF symbol values are offsets into their section.
	find := func(name string) *pe.Symbol {
		for _, s := range f.Symbols {
			if s.Name == name && s.SectionNumber > 0 && int(s.SectionNumber) <= len(f.Sections) {
				return s
			}
		}
		return nil
	}
	if s := find("runtime.text"); s != nil {
		symText = base + uint64(f.Sections[s.SectionNumber-1].VirtualAddress) + uint64(s.Value)
	}
	table := func(start, end string) ([]byte, error) {
		s, e := find(start), find(end)
		if s == nil || e == nil || s.SectionNumber != e.SectionNumber || e.Value < s.Value {
			return nil, nil
		}
		d, err := f.Sections[s.SectionNumber-1].Data()
		if err != nil {
			return nil, err
		}
		if uint64(e.Value) > uint64(len(d)) {
			return nil, fmt.Errorf("oracle: %s beyond its section", end)
		}
		return d[s.Value:e.Value], nil
	}
	if symtab, err = table("runtime.symtab", "runtime.esymtab"); err != nil {
		return
	}
	if symtab == nil {
		if symtab, err = table("symtab", "esymtab"); err != nil {
			return
		}
	}
	if pcln, err = table("runtime.pclntab", "runtime.epclntab"); err != nil || pcln != nil {
		return
	}
	pcln, err = table("pclntab", "epclntab")
	return
}

func plan9Tables(f *plan9obj.File) (text, symText uint64, symtab, pcln []byte, err error) {
	text = f.LoadAddress + f.HdrSize
	syms, err := f.Symbols()
	if err != nil {
		return
	}
	addr := func(name string) (uint64, bool) {
		for _, s := range syms {
			if s.Name == name {
				return s.Value, true
			}
		}
		return 0, false
	}
	symText, _ = addr("runtime.text")
	sect := f.Section("text")
	if sect == nil {
		return 0, 0, nil, nil, errors.New("oracle: Plan 9 file without text")
	}
	seg, err := sect.Data()
	if err != nil {
		return
	}
	// Symbol values are addresses; the text segment is loaded at text.
	table := func(start, end string) []byte {
		s, ok1 := addr(start)
		e, ok2 := addr(end)
		if !ok1 || !ok2 || s < text || e < s || e-text > uint64(len(seg)) {
			return nil
		}
		return seg[s-text : e-text]
	}
	if symtab = table("runtime.symtab", "runtime.esymtab"); symtab == nil {
		symtab = table("symtab", "esymtab")
	}
	if pcln = table("runtime.pclntab", "runtime.epclntab"); pcln == nil {
		pcln = table("pclntab", "epclntab")
	}
	return
}
