package gosym

import (
	"bytes"
	"os"
	"path/filepath"
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
			if offs := objtest.MappedOffsets(t, path); len(offs) != 0 {
				t.Errorf("Open read %d pages of the mapping, the first at file offset %#x; want none", len(offs), offs[0])
			}
			if in := tab.Info(); in.FoundBy != c.pclntab || in.ModuledataFoundBy != c.moduledata {
				t.Errorf("pclntab found by %q, moduledata by %q; want %q, %q", in.FoundBy, in.ModuledataFoundBy, c.pclntab, c.moduledata)
			}
		})
	}
}
