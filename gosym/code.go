package gosym

import (
	"fmt"

	"github.com/gosym-dev/gosym/object"
)

// CodeEnd returns one past f's last instruction: End without the alignment
// padding that follows the code, where f's line table records no line
// (ResolveLocations there gives File "" and Line 0). For a function whose
// line table covers it to End, or records nothing, it is End.
func (f Function) CodeEnd() uint64 {
	end := f.End()
	if f.t == nil {
		return end
	}
	it := f.rangeIter(f.field(f.t.layout.pcln))
	last := f.entry
	for it.hi < end && it.next() {
		if it.val >= 0 {
			last = it.hi
		}
	}
	if last <= f.entry || last >= end {
		return end
	}
	return last
}

// Code returns f's instructions, the bytes of [Entry, CodeEnd) as the
// object's sections hold them (mapped, not copied, where the Table maps
// its file). It fails for code the object holds no bytes of (WebAssembly
// PCs, for instance, are no addresses of the module's bytes).
func (f Function) Code() ([]byte, error) {
	if f.t == nil {
		return nil, ErrPCNotFound
	}
	if f.t.closed.Load() {
		return nil, ErrClosed
	}
	lo, hi := f.entry, f.CodeEnd()
	secs, err := f.t.obj.Sections()
	if err != nil {
		return nil, err
	}
	var past error
	for i, s := range secs {
		if s.Flags&object.SectionAlloc == 0 || lo < s.Addr || lo-s.Addr >= s.FileSize {
			continue
		}
		if hi-s.Addr > s.FileSize {
			// The function table puts code past the end of the
			// section that holds its entry: corrupt, unless another
			// section holds all of it.
			past = fmt.Errorf("%w: the code of %s [%#x, %#x) runs past the end of section %q at %#x",
				ErrCorrupted, f.Name(), lo, hi, s.Name, s.Addr+s.FileSize)
			continue
		}
		data, err := f.t.obj.SectionData(i)
		if err != nil {
			return nil, err
		}
		if hi-s.Addr > uint64(len(data)) {
			continue
		}
		return data[lo-s.Addr : hi-s.Addr : hi-s.Addr], nil
	}
	if past != nil {
		return nil, past
	}
	return nil, fmt.Errorf("gosym: no section holds the code of %s [%#x, %#x)", f.Name(), lo, hi)
}
