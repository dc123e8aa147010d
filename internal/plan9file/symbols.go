package plan9file

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"

	p9 "debug/plan9obj"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// LookupSymbol returns the text, data or bss symbol called name (types T,
// t, L, l, D, d, B and b) from the Plan 9 symbol table; where several share
// a name, the first one wins. Sizes are not recorded, so Size is 0. The
// first few calls search the table; later ones read a map of the symbols,
// made on the first of them.
func (f *File) LookupSymbol(name string) (objfile.Symbol, bool, error) {
	return f.syms.LookupEach(name, f.eachSymbol)
}

// Symbols yields the text, data and bss symbols of the symbol table, in
// table order (every entry, duplicate names included). Sizes are not
// recorded; Func marks text symbols (types T, t, L and l).
func (f *File) Symbols() iter.Seq2[objfile.Symbol, error] {
	return objfile.Each(f.eachSymbol).Seq()
}

// eachSymbol calls fn for each text, data or bss symbol until fn returns
// false; if name is not empty, only for those called name (an
// objfile.Each).
func (f *File) eachSymbol(name string, fn func(objfile.Symbol) bool) error {
	stopped := false
	visit := func(typ byte, b []byte, value uint64) bool {
		symName := name
		if name == "" {
			symName = string(b)
		} else if string(b) != name {
			return true
		}
		if s, ok := symbol(typ, symName, value); ok && !fn(s) {
			stopped = true
		}
		return !stopped
	}
	if f.pf != nil {
		syms, err := f.pf.Symbols()
		for _, s := range syms {
			if name != "" && s.Name != name {
				continue
			}
			if sym, ok := symbol(byte(s.Type), s.Name, s.Value); ok && !fn(sym) {
				return nil
			}
		}
		if err != nil && !errors.Is(err, p9.ErrNoSymbols) {
			return formatError("symbol table: %w", err)
		}
		return nil
	}
	tab, err := f.SectionData(symsSect)
	if err != nil {
		return err
	}
	if err := walk(tab, f.magic&p9.Magic64 != 0, visit); err != nil {
		return formatError("symbol table: %w", err)
	}
	return nil
}

// walk calls fn for each entry of the Plan 9 symbol table tab, until fn
// returns false (the names of
// file-name entries, types z and Z, are not decoded). Each entry is a
// big-endian value (8 bytes if wide, else 4), a type byte with the high
// bit set, and a NUL-terminated name; a z or Z entry's name is an empty
// string followed by 2-byte big-endian indexes ending with a zero one.
func walk(tab []byte, wide bool, fn func(typ byte, name []byte, value uint64) bool) error {
	size := 4
	if wide {
		size = 8
	}
	for p := tab; len(p) > 0; {
		if len(p) < size+1 {
			return fmt.Errorf("symbol at %#x truncated", len(tab)-len(p))
		}
		var value uint64
		if wide {
			value = binary.BigEndian.Uint64(p)
		} else {
			value = uint64(binary.BigEndian.Uint32(p))
		}
		typ := p[size] & 0x7f
		p = p[size+1:]
		if typ == 'z' || typ == 'Z' {
			// Skip the leading NUL-terminated string (normally empty),
			// then the 2-byte indexes up to a zero one.
			i := bytes.IndexByte(p, 0) + 1
			for ; i > 0 && i+2 <= len(p) && (p[i] != 0 || p[i+1] != 0); i += 2 {
			}
			if i == 0 || i+2 > len(p) {
				return fmt.Errorf("file name symbol at %#x truncated", len(tab)-len(p))
			}
			p = p[i+2:]
			continue
		}
		n := bytes.IndexByte(p, 0)
		if n < 0 {
			return fmt.Errorf("symbol name at %#x truncated", len(tab)-len(p))
		}
		if !fn(typ, p[:n], value) {
			return nil
		}
		p = p[n+1:]
	}
	return nil
}

// symbol makes a Symbol of a text, data or bss symbol; ok is false for
// other types and for a nameless one.
func symbol(typ byte, name string, value uint64) (s objfile.Symbol, ok bool) {
	switch typ {
	case 'T', 't', 'L', 'l', 'D', 'd', 'B', 'b':
	default:
		return s, false
	}
	if name == "" {
		return s, false
	}
	return objfile.Symbol{Name: name, Addr: value, Func: typ == 'T' || typ == 't' || typ == 'L' || typ == 'l'}, true
}
