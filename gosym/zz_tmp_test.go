package gosym

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"runtime"
	"testing"

	"github.com/gosym-dev/gosym/internal/objfile"
)

type tmpELF struct {
	f *elf.File
}

func (e tmpELF) Endian() binary.ByteOrder { return e.f.ByteOrder }
func (e tmpELF) Sections() ([]objfile.SectionHeader, error) {
	var out []objfile.SectionHeader
	for _, s := range e.f.Sections {
		var fl objfile.SectionFlags
		if s.Flags&elf.SHF_ALLOC != 0 {
			fl |= objfile.SectionAlloc
		}
		if s.Flags&elf.SHF_EXECINSTR != 0 {
			fl |= objfile.SectionExec
		}
		if s.Flags&elf.SHF_WRITE != 0 {
			fl |= objfile.SectionWrite
		}
		fs := s.FileSize
		if s.Type == elf.SHT_NOBITS {
			fs = 0
		}
		out = append(out, objfile.SectionHeader{Name: s.Name, Addr: s.Addr, Size: s.Size, Offset: s.Offset, FileSize: fs, Flags: fl})
	}
	return out, nil
}
func (e tmpELF) SectionData(i int) ([]byte, error) { return e.f.Sections[i].Data() }

func TestTmpSelf(t *testing.T) {
	exe, _ := os.Executable()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := NewTable(tmpELF{f})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("version %s nfunc %d text %#x gofunc %#x", tab.GoVersion(), tab.NumFunctions(), tab.text, tab.gofunc)
	pcs := make([]uintptr, 10)
	n := runtime.Callers(0, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		fr, more := frames.Next()
		locs, err := tab.ResolveLocations(uint64(fr.PC), nil)
		t.Logf("rt %x %s %s:%d | ours %v %v", fr.PC, fr.Function, fr.File, fr.Line, locs, err)
		if !more {
			break
		}
	}
}

func openTestTable(t testing.TB, path string) *Table {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := NewTable(tmpELF{f})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}
