package gosym

import (
	"bytes"
	"sync"
	"unsafe"
)

// strtab holds a table of NUL-terminated strings (function names, file
// paths). The first lookup copies the table out of the object's bytes,
// once, so that every string handed out afterwards shares that copy: no
// lookup allocates, and the strings stay valid after the object is unmapped.
type strtab struct {
	src  []byte
	once sync.Once
	buf  []byte
}

func newStrtab(src []byte) *strtab { return &strtab{src: src} }

// at returns the string at off, up to its NUL (or the end of the table).
func (s *strtab) at(off uint64) string {
	s.once.Do(func() { s.buf = bytes.Clone(s.src) })
	if off >= uint64(len(s.buf)) {
		return ""
	}
	b := s.buf[off:]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// ref returns the offset and length of a string that at returned, for
// str to make it again; ok is false for any other string.
func (s *strtab) ref(str string) (off, n uint32, ok bool) {
	if len(str) == 0 {
		return 0, 0, true
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(str)))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s.buf)))
	if p < base || p-base+uintptr(len(str)) > uintptr(len(s.buf)) {
		return 0, 0, false
	}
	return uint32(p - base), uint32(len(str)), true
}

// str returns the string of length n at off, a reference made by ref.
func (s *strtab) str(off, n uint32) string {
	if n == 0 {
		return ""
	}
	return unsafe.String(&s.buf[off], n)
}
