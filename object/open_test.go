package object_test

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

// openLookups are the symbols package gosym looks up when it opens a Go
// 1.18–1.25 binary (no .go.module section) with a symbol table.
var openLookups = []string{"runtime.firstmoduledata", "runtime.text", "go:func.*"}

// openAndLookUp opens name, looks up openLookups, and closes it, as
// gosym.Open does.
func openAndLookUp(tb testing.TB, name string) {
	f, err := object.Open(name)
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range openLookups {
		if _, err := f.LookupSymbol(s); err != nil {
			tb.Fatalf("%s: %v", s, err)
		}
	}
	f.Close()
}

var toolchainBinaries = sync.OnceValue(func() map[string]string {
	out, err := exec.Command("go", "env", "GOROOT", "GOTOOLDIR").Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) != 2 {
		return nil
	}
	return map[string]string{
		"go":      filepath.Join(f[0], "bin", "go"),
		"compile": filepath.Join(f[1], "compile"),
	}
})

// bigBinary returns the path of the installed toolchain's go or compile
// command, which keep their symbol tables (19,750 and 28,817 symbols in
// go1.26.8), skipping the test if there is none.
func bigBinary(tb testing.TB, name string) string {
	p := toolchainBinaries()[name]
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("no %s command: %v", name, err)
	}
	return p
}

// TestOpenAllocs checks that opening a file and looking up the symbols
// gosym.Open needs allocates as much for the toolchain's compile as for
// the test program, 13 times smaller: no allocation is per symbol.
func TestOpenAllocs(t *testing.T) {
	small := objtest.Path(t, objtest.LinuxAMD64)
	big := bigBinary(t, "compile")
	allocs := func(name string) float64 {
		return testing.AllocsPerRun(20, func() { openAndLookUp(t, name) })
	}
	if s, b := allocs(small), allocs(big); s != b || b > 32 {
		t.Errorf("Open, %d lookups and Close: %v allocations for the test program, %v for compile; want equal, at most 32", len(openLookups), s, b)
	}
}

// BenchmarkOpen opens a file, looks up the symbols gosym.Open looks up in
// a Go 1.18–1.25 binary, and closes it. The stdlib side does the same with
// debug/elf, whose Symbols reads every symbol. prog, the backend tests'
// program, against go and compile shows that the cost does not grow with
// the symbol table: the first lookups walk it, comparing names in place.
func BenchmarkOpen(b *testing.B) {
	for _, bin := range []string{"prog", "go", "compile"} {
		path := func(b *testing.B) string {
			if bin == "prog" {
				return objtest.Path(b, objtest.LinuxAMD64)
			}
			return bigBinary(b, bin)
		}
		b.Run("bin="+bin+"/impl=object", func(b *testing.B) {
			name := path(b)
			b.ReportAllocs()
			for b.Loop() {
				openAndLookUp(b, name)
			}
		})
		b.Run("bin="+bin+"/impl=stdlib", func(b *testing.B) {
			name := path(b)
			b.ReportAllocs()
			for b.Loop() {
				f, err := elf.Open(name)
				if err != nil {
					b.Fatal(err)
				}
				syms, err := f.Symbols()
				if err != nil {
					b.Fatal(err)
				}
				found := 0
				for _, s := range syms {
					for _, want := range openLookups {
						if s.Name == want {
							found++
						}
					}
				}
				if found < len(openLookups) {
					b.Fatalf("found %d of %v", found, openLookups)
				}
				f.Close()
			}
		})
	}
}
