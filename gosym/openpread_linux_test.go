package gosym

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
)

// TestOpenReadsWithPread checks that Open reads what it reads with pread,
// not through the fresh mapping of the file, where each page read costs a
// page fault (BENCHMARKS.md, "Big binaries"): after Open, no page of the
// mapping is in the page table (/proc/self/pagemap). Open reads the
// headers, the build info, the moduledata (by section, by symbol, or by
// the scan of the data), the symbol tables, and the functab entries and
// records it checks (through an open view). The binaries: the test
// program, stripped and not, with its tables found by symbol (its
// .gopclntab, .go.module and pclntab symbols renamed), with its
// moduledata found by the scan (.go.module and runtime.firstmoduledata
// renamed), and the go command.
func TestOpenReadsWithPread(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	prog := objtest.Binary(t, objtest.LinuxAMD64)
	goCmd, err := os.ReadFile(benchBinary(t, "go"))
	if err != nil {
		t.Fatal(err)
	}
	rename := func(b []byte, olds ...string) []byte {
		for _, old := range olds {
			b = bytes.ReplaceAll(b, []byte(old+"\x00"), []byte(old[:len(old)-1]+"X\x00"))
		}
		return b
	}
	cases := []struct {
		name, pclntab, moduledata string
		bin                       []byte
	}{
		{"program", "section .gopclntab", "section .go.module", prog},
		{"stripped", "section .gopclntab", "section .go.module", objtest.Binary(t, objtest.LinuxStripped)},
		{"by-symbol", "symbol runtime.firstmoduledata", "symbol runtime.firstmoduledata", rename(prog, "pclntab", ".go.module")},
		{"by-scan", "section .gopclntab", "scan of section .go.modulX", rename(prog, ".go.module", "runtime.firstmoduledata")},
		{"go", "section .gopclntab", "section .go.module", goCmd},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			if err := os.WriteFile(path, c.bin, 0o644); err != nil {
				t.Fatal(err)
			}
			tab, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer tab.Close()
			if ws := residentWindows(t, path); len(ws) != 0 {
				t.Errorf("Open read %d windows of the mapping, the first at file offset %#x; want none", len(ws), ws[0].first)
			}
			if in := tab.Info(); in.FoundBy != c.pclntab || in.ModuledataFoundBy != c.moduledata {
				t.Errorf("pclntab found by %q, moduledata by %q; want %q, %q", in.FoundBy, in.ModuledataFoundBy, c.pclntab, c.moduledata)
			}
		})
	}
}

// A residentWindow is a 64 KB window of a file's mapping with pages in
// the page table: the file offsets of its first and last such pages, and
// all of them.
type residentWindow struct {
	first, last uint64
	pages       map[uint64]bool
}

// residentWindows returns the windows of this process's mappings of path
// (a file no other mapping shares) that have pages in the page table.
func residentWindows(t *testing.T, path string) []residentWindow {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip(err)
	}
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skip(err)
	}
	defer pm.Close()
	page := uint64(os.Getpagesize())
	var ws []residentWindow
	for _, l := range strings.Split(string(maps), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || f[len(f)-1] != path {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		foff, err3 := strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("/proc/self/maps: %q", l)
		}
		entries := make([]byte, (end-start)/page*8)
		if _, err := pm.ReadAt(entries, int64(start/page*8)); err != nil {
			t.Fatalf("/proc/self/pagemap: %v", err)
		}
		last := ^uint64(0)
		for i := uint64(0); i < uint64(len(entries))/8; i++ {
			if binary.LittleEndian.Uint64(entries[i*8:])&(1<<63) == 0 {
				continue
			}
			off := foff + i*page
			if w := (start + i*page) >> 16; w != last {
				last = w
				ws = append(ws, residentWindow{first: off, pages: map[uint64]bool{}})
			}
			ws[len(ws)-1].last = off
			ws[len(ws)-1].pages[off] = true
		}
	}
	return ws
}
