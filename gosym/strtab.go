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

// maxString bounds the strings of a table: a string is its bytes up to a
// NUL within maxString bytes. Real names and paths are far shorter (the
// longest of the go command's 20,000 functions has 143 bytes), and the
// bound keeps the work of reading one string, and of every pass that
// reads each function's name, independent of the size of the table: a
// damaged table without NULs would otherwise make every string run to
// its end.
const maxString = 1 << 16

func newStrtab(src []byte) *strtab { return &strtab{src: src} }

// at returns the string at off, up to its NUL; "" if off is outside the
// table or no NUL ends the string within maxString bytes.
func (s *strtab) at(off uint64) string {
	str, _ := s.lookup(off)
	return str
}

// lookup is at, with ok false when off is outside the table or the string
// has no NUL within maxString bytes.
func (s *strtab) lookup(off uint64) (str string, ok bool) {
	s.once.Do(func() { s.buf = bytes.Clone(s.src) })
	n, ok := stringLen(s.buf, off)
	if n == 0 {
		return "", ok
	}
	return unsafe.String(&s.buf[off], n), true
}

// stringLen returns the length of the string at off in a table of
// NUL-terminated strings; ok is false when off is outside the table or no
// NUL ends the string within maxString bytes.
func stringLen(tab []byte, off uint64) (n int, ok bool) {
	if off >= uint64(len(tab)) {
		return 0, false
	}
	b := tab[off:]
	n = bytes.IndexByte(b[:min(len(b), maxString+1)], 0)
	return max(n, 0), n >= 0
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
