package lidia

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// cgoProgram is a program with C functions of its own (one static, one
// not), built with external linking, so that the C runtime's functions
// and runtime/cgo's are in the binary too.
const cgoProgram = `package main

/*
__attribute__((noinline)) static int gosym_c_static(int x) { return 3 * x + 1; }
__attribute__((noinline)) int gosym_c_global(int x) { return gosym_c_static(x) * 2; }
*/
import "C"

func main() { println(C.gosym_c_global(7)) }
`

// farC is C code for cgoProgram placed in a section of its own, which
// buildCgo with far links 0x70_0000_0000 bytes away from the rest, as
// some embedded and JIT-style programs lay out their code.
const farC = `#cgo CFLAGS: -fno-asynchronous-unwind-tables
__attribute__((section(".fartext"), used, noinline)) int gosym_c_far(int x) { return x + 5; }
`

// buildCgo builds cgoProgram (with far, farC too) with the installed
// toolchain and a C compiler; it skips the test when there is none.
func buildCgo(t *testing.T, far bool) []byte {
	t.Helper()
	cc := "gcc"
	if out, err := exec.Command("go", "env", "CC").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		cc = strings.Fields(string(out))[0]
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("no C compiler (%s) to build a cgo program: %v", cc, err)
	}
	dir := t.TempDir()
	prog, ldflags := cgoProgram, "-ldflags=-linkmode=external"
	if far {
		prog = strings.Replace(prog, "/*\n", "/*\n"+farC, 1)
		ldflags += " -extldflags=-Wl,--section-start=.fartext=0x7000000000"
	}
	for name, text := range map[string]string{"main.go": prog, "go.mod": "module cgoprog\n\ngo 1.24\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "build", ldflags, "-o", "prog")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "prog"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestCFunctions writes cgo binaries linked externally (two built here,
// one with a C function 448 GiB away from the rest, and the corpus's
// cgo-extlink entries where the corpus has them) and
// checks, with debug/elf's symbol table as the oracle, that every PC of a
// C function (STT_FUNC of .symtab, else .dynsym, with a size, outside the
// Go functions) gives that function in Lookup and in Pyroscope's reader,
// and that Go PCs still round-trip.
func TestCFunctions(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	bins := map[string][]byte{}
	entries, err := testcorpus.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Variant == "cgo-extlink" && e.GOOS == "linux" {
			if bins[e.Name], err = e.Binary(); err != nil {
				t.Fatal(err)
			}
		}
	}
	bins["built here"] = buildCgo(t, false)
	bins["built here, far"] = buildCgo(t, true)
	for name, bin := range bins {
		t.Run(name, func(t *testing.T) {
			obj, err := object.NewBytes(bin)
			if err != nil {
				t.Fatal(err)
			}
			tab, err := gosym.NewTable(obj)
			if err != nil {
				t.Fatal(err)
			}
			data := writeBytes(t, tab)
			roundTrip(t, tab, data)
			n := checkCFunctions(t, tab, bin, data)
			switch name {
			case "built here":
				if n < 2 {
					t.Errorf("%d C functions checked", n)
				}
			case "built here, far":
				// The gap is left out of the index, which reads the file
				// as nested (roundTrip checked the frames).
				if r := newReader(t, data); n < 3 || r.nodes == nil || len(r.segs) < 2 {
					t.Errorf("%d C functions checked; index %v with %d segments", n, r.nodes != nil, len(r.segs))
				}
			}
		})
	}
}

// checkCFunctions checks every PC of the C functions of bin and returns
// how many of the program's own (gosym_c_*) it found.
func checkCFunctions(t *testing.T, tab *gosym.Table, bin, data []byte) int {
	ef, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := ef.Symbols()
	if err != nil {
		syms, err = ef.DynamicSymbols()
	}
	if err != nil {
		t.Fatal(err)
	}
	fns := functions(t, tab)
	inGo := func(pc uint64) bool {
		for _, f := range fns {
			if f.Entry() <= pc && pc < f.End() {
				return true
			}
		}
		return false
	}
	r := newReader(t, data)
	p, err := openPyro(bytes.NewReader(data), true)
	if err != nil {
		t.Fatal(err)
	}
	// names[pc] lists the C functions at pc.
	names := map[uint64][]string{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 || s.Name == "" || s.Section == elf.SHN_UNDEF || inGo(s.Value) {
			continue
		}
		for pc := s.Value; pc < s.Value+s.Size; pc++ {
			if !inGo(pc) {
				names[pc] = append(names[pc], s.Name)
			}
		}
	}
	own, funcs := 0, map[string]bool{}
	var got []gosym.Location
	var pf []pyroFrame
	for pc, want := range names {
		got, err = r.Lookup(pc, got)
		pf = p.Lookup(pf, pc)
		if err != nil || len(got) != 1 || len(pf) != 1 || got[0].Function != pf[0].FunctionName || got[0].File != "" || got[0].Line != 0 || pf[0].FilePath != "" {
			t.Fatalf("C pc %#x (%v): Lookup %v, %v; Pyroscope %v", pc, want, got, err, pf)
		}
		if !strings.Contains(" "+strings.Join(want, " ")+" ", " "+got[0].Function+" ") {
			t.Fatalf("C pc %#x: Lookup %v, want one of %v", pc, got, want)
		}
		if !funcs[got[0].Function] && strings.HasPrefix(got[0].Function, "gosym_c_") {
			own++
		}
		funcs[got[0].Function] = true
	}
	t.Logf("%d PCs of %d C functions agree with the ELF symbol table", len(names), len(funcs))
	return own
}
