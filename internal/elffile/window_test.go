package elffile

import (
	"bytes"
	"slices"
	"testing"
	"unsafe"
)

// copier reads data as package object's mapped files do (mmapfile.Data):
// ReadAt, and Copy of a slice of data. With fail, Copy copies nothing;
// calls counts the copies and max is the largest.
type copier struct {
	data       []byte
	fail       bool
	calls, max int
}

func (c *copier) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(c.data).ReadAt(p, off)
}

func (c *copier) Copy(dst, src []byte) int {
	c.calls++
	if c.fail || len(src) == 0 {
		return 0
	}
	// src must be a slice of data, as the mapping's are.
	base := uintptr(unsafe.Pointer(unsafe.SliceData(c.data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(src)))
	if p < base || p+uintptr(len(src)) > base+uintptr(len(c.data)) {
		panic("Copy of bytes outside the file")
	}
	n := copy(dst, src)
	c.max = max(c.max, n)
	return n
}

// TestLookupWindows checks that a File whose ReaderAt can copy (package
// object's mapped files) looks symbols up through windows of at most
// lookupChunk bytes and finds exactly what a File made by NewBytes finds,
// for a .dynsym searched through its GNU hash table (3,002 defined
// symbols) and one walked (102), also when every copy fails (the windows
// then read the file's bytes).
func TestLookupWindows(t *testing.T) {
	for _, n := range []int{3000, 100} {
		unhashed, hashed := hashSyms(n)
		e := buildHashELF(t, unhashed, hashed, 257)
		want, err := NewBytes(e.data)
		if err != nil {
			t.Fatal(err)
		}
		names := []string{"imp0", "early", "dup", "sym", "sym0", "no such symbol", "dup\x00"}
		for i := 0; i < n; i += 7 {
			names = append(names, hashed[i].name)
		}
		for _, fail := range []bool{false, true} {
			c := &copier{data: e.data, fail: fail}
			got, err := NewBytesAt(e.data, c)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range names {
				ws, wok, werr := want.LookupSymbol(name)
				gs, gok, gerr := got.LookupSymbol(name)
				if gs != ws || gok != wok || (gerr == nil) != (werr == nil) {
					t.Errorf("%d symbols, failing copies %v: LookupSymbol(%q) = %+v, %v, %v; NewBytes: %+v, %v, %v", n, fail, name, gs, gok, gerr, ws, wok, werr)
				}
			}
			if c.calls == 0 || c.max > lookupChunk {
				t.Errorf("%d symbols, failing copies %v: %d copies, the largest of %d bytes; want some, of at most %d", n, fail, c.calls, c.max, lookupChunk)
			}
			if slices.Contains([]int{3000}, n) && !fail {
				if _, ok := got.hashTable(&got.dynsym); !ok {
					t.Error("the hash table is not used")
				}
			}
		}
	}
}
