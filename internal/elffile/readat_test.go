package elffile_test

import (
	"bytes"
	"debug/elf"
	"errors"
	"reflect"
	"testing"

	"github.com/gosym-dev/gosym/internal/elffile"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
)

// failingReader fails every read.
type failingReader struct{}

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errors.New("no") }

// TestNewBytesAt checks that NewBytesAt reads the headers through its
// ReaderAt: given data whose file header, section headers and section
// names are zeroed, and a ReaderAt of the real bytes, it decodes the
// sections NewBytes decodes from the real bytes; given the real bytes and
// a ReaderAt that fails, it reads them from the data; without section
// headers, the program headers come through the ReaderAt too.
func TestNewBytesAt(t *testing.T) {
	for _, tg := range []objtest.Target{objtest.LinuxAMD64, objtest.Linux386} {
		bin := objtest.Binary(t, tg)
		for name, b := range map[string][]byte{"sections": bin, "segments": objtest.StripSectionHeaders(t, bin)} {
			ef, err := elf.NewFile(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			blank := bytes.Clone(b)
			clear(blank[:64])
			// Zero the tables the header locates, as debug/elf found them.
			if len(ef.Sections) > 0 {
				shoff, shentsize := headerFields(b, ef.Class)
				clear(blank[shoff : shoff+uint64(len(ef.Sections))*shentsize])
				for _, s := range ef.Sections {
					if s.Type == elf.SHT_STRTAB && s.Name == ".shstrtab" {
						clear(blank[s.Offset : s.Offset+s.FileSize])
					}
				}
			} else {
				phoff := phoffField(b, ef.Class)
				clear(blank[phoff : phoff+uint64(len(ef.Progs))*phentsize(ef.Class)])
			}
			want, err := elffile.NewBytes(b)
			if err != nil {
				t.Fatal(err)
			}
			ws, _ := want.Sections()
			for _, c := range []struct {
				what string
				data []byte
				r    interface {
					ReadAt([]byte, int64) (int, error)
				}
			}{
				{"headers blanked, read through r", blank, bytes.NewReader(b)},
				{"r fails", b, failingReader{}},
			} {
				got, err := elffile.NewBytesAt(c.data, c.r)
				if err != nil {
					t.Errorf("%s %s, %s: %v", tg.Name, name, c.what, err)
					continue
				}
				gs, _ := got.Sections()
				if !reflect.DeepEqual(gs, ws) || got.Arch() != want.Arch() || got.Endian() != want.Endian() {
					t.Errorf("%s %s, %s: sections %v; want %v", tg.Name, name, c.what, gs, ws)
				}
			}
		}
	}
}

// headerFields returns e_shoff and e_shentsize.
func headerFields(b []byte, c elf.Class) (shoff, shentsize uint64) {
	if c == elf.ELFCLASS64 {
		return uint64(le(b[40:], 8)), uint64(le(b[58:], 2))
	}
	return uint64(le(b[32:], 4)), uint64(le(b[46:], 2))
}

// phoffField returns e_phoff.
func phoffField(b []byte, c elf.Class) uint64 {
	if c == elf.ELFCLASS64 {
		return le(b[32:], 8)
	}
	return le(b[28:], 4)
}

func phentsize(c elf.Class) uint64 {
	if c == elf.ELFCLASS64 {
		return 56
	}
	return 32
}

// le reads an n-byte little-endian number (the test targets are
// little-endian).
func le(b []byte, n int) uint64 {
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// FuzzNewBytesAt checks that NewBytesAt, reading the headers through a
// ReaderAt of the same bytes, decodes whatever NewBytes decodes, the same
// way, and refuses what it refuses.
func FuzzNewBytesAt(f *testing.F) {
	for _, tg := range []objtest.Target{objtest.LinuxAMD64, objtest.Linux386} {
		m := objtest.Mini(f, objtest.Binary(f, tg))
		fuzzseed.Add(f, m)
		fuzzseed.Add(f, objtest.StripSectionHeaders(f, m))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, werr := elffile.NewBytes(data)
		got, gerr := elffile.NewBytesAt(data, bytes.NewReader(data))
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("NewBytesAt: %v; NewBytes: %v", gerr, werr)
		}
		if werr != nil {
			return
		}
		ws, _ := want.Sections()
		gs, _ := got.Sections()
		if !reflect.DeepEqual(gs, ws) {
			t.Fatalf("NewBytesAt: sections %v; NewBytes: %v", gs, ws)
		}
	})
}
