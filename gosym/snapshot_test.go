package gosym

import "fmt"

// snapshot is a copy of target memory [base, base+len(data)).
type snapshot struct {
	base uint64
	data []byte
}

func (s *snapshot) ReadAt(p []byte, off int64) (int, error) {
	a := uint64(off)
	if a < s.base || a-s.base > uint64(len(s.data)) || uint64(len(s.data))-(a-s.base) < uint64(len(p)) {
		return 0, fmt.Errorf("address %#x not in the snapshot", a)
	}
	return copy(p, s.data[a-s.base:]), nil
}
