// Package addrspace maps link-time virtual addresses to the file bytes that
// hold them, so that pointers stored in a binary (funcdata, moduledata
// fields, build-info strings) can be followed without loading the program.
package addrspace

import (
	"cmp"
	"slices"
	"sort"

	"github.com/gosym-dev/gosym/object"
)

// Space is a set of non-overlapping address ranges backed by file bytes.
// The zero Space maps nothing. A Space is read-only once built and safe for
// concurrent use.
type Space struct {
	segs []segment // sorted by addr
}

type segment struct {
	addr uint64
	data []byte
}

// FromObject maps every allocated section of obj that has bytes in the
// file; secs are obj's section headers. It reads only section headers and
// takes zero-copy section data, so its cost does not depend on the size of
// the sections.
func FromObject(obj object.Object, secs []object.SectionHeader) *Space {
	s := &Space{segs: make([]segment, 0, len(secs))}
	for i, sh := range secs {
		if sh.Flags&object.SectionAlloc == 0 || sh.FileSize == 0 || sh.Addr == 0 {
			continue
		}
		data, err := obj.SectionData(i)
		if err != nil || len(data) == 0 {
			continue
		}
		if uint64(len(data)) > sh.Size && sh.Size > 0 {
			data = data[:sh.Size]
		}
		s.segs = append(s.segs, segment{sh.Addr, data})
	}
	slices.SortFunc(s.segs, func(a, b segment) int { return cmp.Compare(a.addr, b.addr) })
	return s
}

// Add maps data at addr. It is for building a Space by hand (tests, and
// callers that know a blob's address).
func (s *Space) Add(addr uint64, data []byte) {
	i := sort.Search(len(s.segs), func(i int) bool { return s.segs[i].addr > addr })
	s.segs = append(s.segs, segment{})
	copy(s.segs[i+1:], s.segs[i:])
	s.segs[i] = segment{addr, data}
}

// From returns the bytes from addr to the end of the range that holds it,
// or nil if no range holds addr.
func (s *Space) From(addr uint64) []byte {
	if s == nil {
		return nil
	}
	segs := s.segs
	// Largest i with segs[i].addr <= addr.
	lo, hi := 0, len(segs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if segs[m].addr <= addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return nil
	}
	seg := segs[lo-1]
	if off := addr - seg.addr; off < uint64(len(seg.data)) {
		return seg.data[off:]
	}
	return nil
}

// Slice returns the n bytes at addr, or nil unless all of them are mapped
// by one range.
func (s *Space) Slice(addr, n uint64) []byte {
	b := s.From(addr)
	if uint64(len(b)) < n {
		return nil
	}
	return b[:n]
}
