package gosym

import "encoding/binary"

// reader reads the fixed-width integers of a table in the target's byte
// order. Every read is bounds-checked by its callers; these helpers assume
// the slice is long enough.
type reader struct {
	bigEndian bool
	ptrSize   int
}

func (r reader) u16(b []byte) uint16 {
	if r.bigEndian {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (r reader) u32(b []byte) uint32 {
	if r.bigEndian {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (r reader) u64(b []byte) uint64 {
	if r.bigEndian {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// ptr reads a target pointer (4 or 8 bytes).
func (r reader) ptr(b []byte) uint64 {
	if r.ptrSize == 4 {
		return uint64(r.u32(b))
	}
	return r.u64(b)
}

// u32At reads a u32 at off in b, reporting false if it does not fit.
func (r reader) u32At(b []byte, off uint64) (uint32, bool) {
	if off > uint64(len(b)) || uint64(len(b))-off < 4 {
		return 0, false
	}
	return r.u32(b[off:]), true
}
