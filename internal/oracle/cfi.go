package oracle

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
)

// CFI is the call frame information of a binary's .debug_frame section,
// decoded by a small interpreter of the DWARF call frame instructions
// (DWARF 4, section 6.4), independent of the pclntab.
type CFI struct {
	FDEs []FDE // in section order
}

// FDE is one frame description entry, its instructions run into rows.
type FDE struct {
	Start, End uint64 // the PCs it covers: [Start, End)
	RAReg      uint64 // the CIE's return address register
	Rows       []CFIRow
}

// CFIRow is the rule in force from PC up to the next row's PC (or End).
type CFIRow struct {
	PC        uint64
	CFAReg    uint64 // register number (DWARF numbering of the target)
	CFAOffset int64
	CFAExpr   bool // the CFA is a DWARF expression (not interpreted)
	RA        RARule
}

// RARule says where the return address register's previous value is.
type RARule struct {
	Kind   RAKind
	Offset int64 // for RAOffset: saved at CFA+Offset; for RAValOffset: is CFA+Offset
	Reg    uint64
}

// RAKind is the kind of rule of a register.
type RAKind uint8

const (
	RAUnset     RAKind = iota // no rule given (the CIE's default: same value, by convention)
	RAUndefined               // DW_CFA_undefined: no previous value (outermost frame)
	RASame                    // DW_CFA_same_value: still in the register
	RAOffset                  // saved in memory at CFA+Offset
	RAValOffset               // the value CFA+Offset
	RARegister                // in another register
	RAOther                   // an expression
)

// Rule returns the row in force at pc, from the FDE holding pc.
func (c *CFI) Rule(pc uint64) (CFIRow, *FDE, bool) {
	i := sort.Search(len(c.FDEs), func(i int) bool { return c.FDEs[i].End > pc })
	if i == len(c.FDEs) || pc < c.FDEs[i].Start {
		return CFIRow{}, nil, false
	}
	f := &c.FDEs[i]
	j := sort.Search(len(f.Rows), func(j int) bool { return f.Rows[j].PC > pc })
	if j == 0 {
		return CFIRow{}, f, false
	}
	return f.Rows[j-1], f, true
}

// NewCFI reads the .debug_frame section (compressed or not) of the ELF,
// Mach-O (thin) or PE file in data. It returns an error if there is none.
func NewCFI(data []byte) (*CFI, error) {
	sec, order, addrSize, err := debugFrame(data)
	if err != nil {
		return nil, err
	}
	c, err := parseCFI(sec, order, addrSize)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(c.FDEs, func(i, j int) bool { return c.FDEs[i].Start < c.FDEs[j].Start })
	return c, nil
}

// debugFrame returns the uncompressed .debug_frame of the file.
func debugFrame(data []byte) (sec []byte, order binary.ByteOrder, addrSize int, err error) {
	r := bytes.NewReader(data)
	var raw []byte
	zlibbed := false
	switch {
	case bytes.HasPrefix(data, []byte(elf.ELFMAG)):
		f, err := elf.NewFile(r)
		if err != nil {
			return nil, nil, 0, err
		}
		order, addrSize = f.ByteOrder, 4
		if f.Class == elf.ELFCLASS64 {
			addrSize = 8
		}
		if s := f.Section(".debug_frame"); s != nil {
			raw, err = s.Data() // SHF_COMPRESSED is undone by Data
		} else if s := f.Section(".zdebug_frame"); s != nil {
			raw, err = s.Data() // debug/elf undoes the "ZLIB" framing too
		} else {
			return nil, nil, 0, errors.New("oracle: no .debug_frame")
		}
		if err != nil {
			return nil, nil, 0, err
		}
	case bytes.HasPrefix(data, []byte("MZ")):
		f, err := pe.NewFile(r)
		if err != nil {
			return nil, nil, 0, err
		}
		order, addrSize = binary.LittleEndian, 4
		if _, ok := f.OptionalHeader.(*pe.OptionalHeader64); ok {
			addrSize = 8
		}
		s := f.Section(".debug_frame")
		if s == nil {
			if s = f.Section(".zdebug_frame"); s == nil {
				return nil, nil, 0, errors.New("oracle: no .debug_frame")
			}
			zlibbed = true
		}
		if raw, err = s.Data(); err != nil {
			return nil, nil, 0, err
		}
		if s.VirtualSize != 0 && s.VirtualSize < uint32(len(raw)) {
			raw = raw[:s.VirtualSize] // Data is rounded up to the file alignment
		}
	default:
		f, err := macho.NewFile(r)
		if err != nil {
			return nil, nil, 0, errors.New("oracle: not an ELF, Mach-O or PE file")
		}
		order, addrSize = f.ByteOrder, 8
		if f.Magic == macho.Magic32 {
			addrSize = 4
		}
		s := f.Section("__debug_frame")
		if s == nil {
			if s = f.Section("__zdebug_frame"); s == nil {
				return nil, nil, 0, errors.New("oracle: no __debug_frame")
			}
			zlibbed = true
		}
		if raw, err = s.Data(); err != nil {
			return nil, nil, 0, err
		}
	}
	if zlibbed && bytes.HasPrefix(raw, []byte("ZLIB")) {
		// "ZLIB", the uncompressed size (8 bytes, big-endian), a zlib stream.
		if len(raw) < 12 || string(raw[:4]) != "ZLIB" {
			return nil, nil, 0, errors.New("oracle: bad .zdebug_frame header")
		}
		zr, err := zlib.NewReader(bytes.NewReader(raw[12:]))
		if err != nil {
			return nil, nil, 0, err
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return nil, nil, 0, err
		}
	}
	return raw, order, addrSize, nil
}

type cie struct {
	codeAlign uint64
	dataAlign int64
	raReg     uint64
	initial   []byte
}

// cfiReader reads the section's fields.
type cfiReader struct {
	b     []byte
	order binary.ByteOrder
	err   error
}

func (r *cfiReader) fail(msg string) {
	if r.err == nil {
		r.err = errors.New("oracle: .debug_frame: " + msg)
	}
	r.b = nil
}

func (r *cfiReader) bytes(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.fail("truncated")
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *cfiReader) u8() uint8 {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (r *cfiReader) uint(n int) uint64 {
	b := r.bytes(uint64(n))
	switch {
	case b == nil:
		return 0
	case n == 2:
		return uint64(r.order.Uint16(b))
	case n == 4:
		return uint64(r.order.Uint32(b))
	}
	return r.order.Uint64(b)
}

func (r *cfiReader) uleb() uint64 {
	var v uint64
	var shift uint
	for {
		b := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		shift += 7
		if b < 0x80 {
			return v
		}
	}
}

func (r *cfiReader) sleb() int64 {
	var v int64
	var shift uint
	for {
		b := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		shift += 7
		if b < 0x80 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

func parseCFI(sec []byte, order binary.ByteOrder, addrSize int) (*CFI, error) {
	cies := map[uint64]*cie{}
	out := &CFI{}
	type pending struct {
		cieOff     uint64
		start, end uint64
		instr      []byte
	}
	var fdes []pending
	for off := uint64(0); off < uint64(len(sec)); {
		r := &cfiReader{b: sec[off:], order: order}
		length := r.uint(4)
		hdr := uint64(4)
		dwarf64 := length == 0xffffffff
		if dwarf64 {
			length = r.uint(8)
			hdr = 12
		}
		if r.err != nil {
			return nil, r.err
		}
		if length == 0 { // padding
			off += hdr
			continue
		}
		body := r.bytes(length)
		if r.err != nil {
			return nil, fmt.Errorf("%v at %#x", r.err, off)
		}
		br := &cfiReader{b: body, order: order}
		var id uint64
		if dwarf64 {
			id = br.uint(8)
		} else {
			id = br.uint(4)
		}
		if (!dwarf64 && id == 0xffffffff) || (dwarf64 && id == ^uint64(0)) {
			c := &cie{}
			version := br.u8()
			aug := br.b[:bytes.IndexByte(br.b, 0)+1]
			br.bytes(uint64(len(aug)))
			if len(aug) != 1 {
				return nil, fmt.Errorf("oracle: .debug_frame: CIE at %#x: augmentation %q not supported", off, aug)
			}
			if version >= 4 {
				br.u8() // address_size
				br.u8() // segment_selector_size
			}
			c.codeAlign = br.uleb()
			c.dataAlign = br.sleb()
			if version == 1 {
				c.raReg = uint64(br.u8())
			} else {
				c.raReg = br.uleb()
			}
			c.initial = br.b
			if br.err != nil {
				return nil, fmt.Errorf("%v at %#x", br.err, off)
			}
			cies[off] = c
		} else {
			start := br.uint(addrSize)
			size := br.uint(addrSize)
			if br.err != nil {
				return nil, fmt.Errorf("%v at %#x", br.err, off)
			}
			fdes = append(fdes, pending{cieOff: id, start: start, end: start + size, instr: br.b})
		}
		off += hdr + length
	}
	for _, p := range fdes {
		c := cies[p.cieOff]
		if c == nil {
			return nil, fmt.Errorf("oracle: .debug_frame: FDE at %#x names no CIE (%#x)", p.start, p.cieOff)
		}
		f := FDE{Start: p.start, End: p.end, RAReg: c.raReg}
		init, err := runCFI(c, CFIRow{PC: p.start}, nil, c.initial, order, addrSize, nil)
		if err != nil {
			return nil, err
		}
		rows, err := runCFI(c, init[len(init)-1], &init[len(init)-1], p.instr, order, addrSize, nil)
		if err != nil {
			return nil, fmt.Errorf("%v (FDE at %#x)", err, p.start)
		}
		// Rows at the same PC: the last one holds.
		for _, row := range rows {
			if n := len(f.Rows); n > 0 && f.Rows[n-1].PC == row.PC {
				f.Rows[n-1] = row
				continue
			}
			f.Rows = append(f.Rows, row)
		}
		out.FDEs = append(out.FDEs, f)
	}
	return out, nil
}

// runCFI runs instructions from row and returns the rows made: one per
// advance, and the final one. initial is the CIE's row, for
// DW_CFA_restore of the return address register.
func runCFI(c *cie, row CFIRow, initial *CFIRow, instr []byte, order binary.ByteOrder, addrSize int, rows []CFIRow) ([]CFIRow, error) {
	r := &cfiReader{b: instr, order: order}
	var stack []CFIRow
	setRA := func(reg uint64, rule RARule) {
		if reg == c.raReg {
			row.RA = rule
		}
	}
	advance := func(delta uint64) {
		rows = append(rows, row)
		row.PC += delta * c.codeAlign
	}
	for len(r.b) > 0 && r.err == nil {
		op := r.u8()
		switch op >> 6 {
		case 1: // DW_CFA_advance_loc
			advance(uint64(op & 0x3f))
			continue
		case 2: // DW_CFA_offset
			setRA(uint64(op&0x3f), RARule{Kind: RAOffset, Offset: int64(r.uleb()) * c.dataAlign})
			continue
		case 3: // DW_CFA_restore
			if initial != nil && uint64(op&0x3f) == c.raReg {
				row.RA = initial.RA
			}
			continue
		}
		switch op {
		case 0x00: // nop
		case 0x01: // set_loc
			a := r.uint(addrSize)
			rows = append(rows, row)
			row.PC = a
		case 0x02:
			advance(uint64(r.u8()))
		case 0x03:
			advance(r.uint(2))
		case 0x04:
			advance(r.uint(4))
		case 0x05: // offset_extended
			reg := r.uleb()
			setRA(reg, RARule{Kind: RAOffset, Offset: int64(r.uleb()) * c.dataAlign})
		case 0x06: // restore_extended
			if reg := r.uleb(); initial != nil && reg == c.raReg {
				row.RA = initial.RA
			}
		case 0x07: // undefined
			setRA(r.uleb(), RARule{Kind: RAUndefined})
		case 0x08: // same_value
			setRA(r.uleb(), RARule{Kind: RASame})
		case 0x09: // register
			reg := r.uleb()
			setRA(reg, RARule{Kind: RARegister, Reg: r.uleb()})
		case 0x0a: // remember_state
			stack = append(stack, row)
		case 0x0b: // restore_state
			if len(stack) == 0 {
				return nil, errors.New("oracle: .debug_frame: restore_state without remember_state")
			}
			pc := row.PC
			row = stack[len(stack)-1]
			row.PC = pc
			stack = stack[:len(stack)-1]
		case 0x0c: // def_cfa
			row.CFAReg = r.uleb()
			row.CFAOffset = int64(r.uleb())
			row.CFAExpr = false
		case 0x0d: // def_cfa_register
			row.CFAReg = r.uleb()
			row.CFAExpr = false
		case 0x0e: // def_cfa_offset
			row.CFAOffset = int64(r.uleb())
		case 0x0f: // def_cfa_expression
			r.bytes(r.uleb())
			row.CFAExpr = true
		case 0x10: // expression
			reg := r.uleb()
			r.bytes(r.uleb())
			setRA(reg, RARule{Kind: RAOther})
		case 0x11: // offset_extended_sf
			reg := r.uleb()
			setRA(reg, RARule{Kind: RAOffset, Offset: r.sleb() * c.dataAlign})
		case 0x12: // def_cfa_sf
			row.CFAReg = r.uleb()
			row.CFAOffset = r.sleb() * c.dataAlign
			row.CFAExpr = false
		case 0x13: // def_cfa_offset_sf
			row.CFAOffset = r.sleb() * c.dataAlign
		case 0x14: // val_offset
			reg := r.uleb()
			setRA(reg, RARule{Kind: RAValOffset, Offset: int64(r.uleb()) * c.dataAlign})
		case 0x15: // val_offset_sf
			reg := r.uleb()
			setRA(reg, RARule{Kind: RAValOffset, Offset: r.sleb() * c.dataAlign})
		case 0x16: // val_expression
			reg := r.uleb()
			r.bytes(r.uleb())
			setRA(reg, RARule{Kind: RAOther})
		case 0x2e: // GNU_args_size
			r.uleb()
		case 0x2f: // GNU_negative_offset_extended
			reg := r.uleb()
			setRA(reg, RARule{Kind: RAOffset, Offset: -int64(r.uleb()) * c.dataAlign})
		default:
			return nil, fmt.Errorf("oracle: .debug_frame: unknown call frame instruction %#x", op)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return append(rows, row), nil
}
