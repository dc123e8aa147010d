package object

import (
	"errors"
	"fmt"
)

// ErrNotMapped reports a file offset, or an address, that no loaded
// section holds.
var ErrNotMapped = errors.New("not in a loaded section with bytes in the file")

// A Mapping relates the bytes of an object's file to the link-time
// addresses the loader maps them at, the address space a gosym.Table
// speaks, through its loaded sections (those with SectionAlloc and bytes
// in the file).
//
// It turns a run-time PC of a position-independent executable (or of any
// binary the loader moved) into a link-time address: find the mapping that
// holds the PC in /proc/PID/maps, a core file's program headers or a
// profile's mappings (start, file offset), compute off = pc - start +
// offset, and look that up with Addr. Equivalently, for a binary whose
// load bias is known (the run-time address of its first segment minus
// that segment's link-time address), subtract the bias.
type Mapping struct {
	secs []SectionHeader // the loaded sections with bytes in the file
	idx  []int           // their indices in the object's Sections
}

// NewMapping reads obj's section headers once.
func NewMapping(obj Object) (*Mapping, error) {
	secs, err := obj.Sections()
	if err != nil {
		return nil, err
	}
	m := &Mapping{}
	for i, s := range secs {
		if s.Flags&SectionAlloc != 0 && s.FileSize > 0 {
			m.secs = append(m.secs, s)
			m.idx = append(m.idx, i)
		}
	}
	return m, nil
}

// Section returns the index, in the object's Sections, of the loaded
// section whose bytes in the file hold the link-time address addr (read
// them with SectionData), preferring a code section to another that holds
// it too, such as a segment that spans it.
func (m *Mapping) Section(addr uint64) (int, error) {
	best := -1
	for i, s := range m.secs {
		if s.Addr <= addr && addr-s.Addr < s.FileSize {
			if best < 0 || s.Flags&SectionExec != 0 && m.secs[best].Flags&SectionExec == 0 {
				best = i
			}
		}
	}
	if best < 0 {
		return -1, fmt.Errorf("address %#x: %w", addr, ErrNotMapped)
	}
	return m.idx[best], nil
}

// Addr returns the link-time address of the byte at file offset off.
func (m *Mapping) Addr(off uint64) (uint64, error) {
	for _, s := range m.secs {
		if off >= s.Offset && off-s.Offset < s.FileSize {
			return s.Addr + (off - s.Offset), nil
		}
	}
	return 0, fmt.Errorf("file offset %#x: %w", off, ErrNotMapped)
}

// AddrOfFileOffset returns the link-time address of the byte at file
// offset off: NewMapping(obj) and its Addr(off), for one offset.
func AddrOfFileOffset(obj Object, off uint64) (uint64, error) {
	m, err := NewMapping(obj)
	if err != nil {
		return 0, err
	}
	return m.Addr(off)
}
