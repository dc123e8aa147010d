package plan9file

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	p9 "debug/plan9obj"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// LookupSymbol returns the text, data or bss symbol called name (types T,
// t, L, l, D, d, B and b) from the Plan 9 symbol table; where several share
// a name, the first one wins. Sizes are not recorded, so Size is 0. The
// table is read on the first call.
func (f *File) LookupSymbol(name string) (objfile.Symbol, bool, error) {
	return f.syms.Lookup(name, f.loadSymbols)
}

// loadSymbols adds the symbols of the symbol table to f.syms.
func (f *File) loadSymbols() error {
	if f.pf != nil {
		syms, err := f.pf.Symbols()
		for _, s := range syms {
			f.add(byte(s.Type), s.Name, s.Value)
		}
		if err != nil && !errors.Is(err, p9.ErrNoSymbols) {
			return fmt.Errorf("plan9obj: %w", err)
		}
		return nil
	}
	tab, err := f.SectionData(symsSect)
	if err != nil {
		return err
	}
	if err := walk(tab, f.magic&p9.Magic64 != 0, f.add); err != nil {
		return fmt.Errorf("plan9obj: %w", err)
	}
	return nil
}

// walk calls fn for each entry of the Plan 9 symbol table tab (the names of
// file-name entries, types z and Z, are not decoded). Each entry is a
// big-endian value (8 bytes if wide, else 4), a type byte with the high
// bit set, and a NUL-terminated name; a z or Z entry's name is an empty
// string followed by 2-byte big-endian indexes ending with a zero one.
func walk(tab []byte, wide bool, fn func(typ byte, name string, value uint64)) error {
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
		fn(typ, string(p[:n]), value)
		p = p[n+1:]
	}
	return nil
}

// add records a text, data or bss symbol unless its name is taken.
func (f *File) add(typ byte, name string, value uint64) {
	switch typ {
	case 'T', 't', 'L', 'l', 'D', 'd', 'B', 'b':
	default:
		return
	}
	if name != "" {
		f.syms.Add(objfile.Symbol{Name: name, Addr: value})
	}
}
