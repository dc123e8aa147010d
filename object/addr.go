package object

import (
	"errors"
	"fmt"
)

// ErrNotMapped reports a file offset that no loaded section holds.
var ErrNotMapped = errors.New("offset is in no loaded section")

// AddrOfFileOffset returns the link-time address of the byte at file
// offset off, the address space a gosym.Table speaks.
//
// It turns a run-time PC of a position-independent executable (or any
// binary the loader moved) into a link-time address: find the mapping that
// holds the PC in /proc/PID/maps (start, file offset), compute
// off = pc - start + offset, and look that up here. Equivalently, for a
// binary whose load bias is known (the run-time address of its first
// segment minus that segment's link-time address), subtract the bias.
func AddrOfFileOffset(obj Object, off uint64) (uint64, error) {
	secs, err := obj.Sections()
	if err != nil {
		return 0, err
	}
	for _, s := range secs {
		if s.Flags&SectionAlloc == 0 || s.FileSize == 0 {
			continue
		}
		if off >= s.Offset && off-s.Offset < s.FileSize {
			return s.Addr + (off - s.Offset), nil
		}
	}
	return 0, fmt.Errorf("%w: %#x", ErrNotMapped, off)
}
