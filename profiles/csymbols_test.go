package profiles_test

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/profiles"
)

const cgoProg = `package main

/*
int gosym_c_work(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * n; return s; }
*/
import "C"

func main() { println(C.gosym_c_work(7)) }
`

// TestCSymbols symbolizes addresses in the C code of an externally
// linked cgo program: each gets the name of the ELF function symbol that
// debug/elf says holds it, with no file or line.
func TestCSymbols(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc: cgo programs cannot be built")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(cgoProg), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module cgoprog\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	{
		ldflags := "-linkmode=external"
		exe := filepath.Join(dir, "prog")
		cmd := exec.Command("go", "build", "-o", exe, "-ldflags="+ldflags, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		// The C function's address, from the unstripped build's symbols.
		data, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var addr uint64
		syms, err := ef.Symbols()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range syms {
			if s.Name == "gosym_c_work" && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
				addr = s.Value
			}
		}
		if addr == 0 {
			t.Fatal("no symbol gosym_c_work")
		}
		tab, err := gosym.Open(exe)
		if err != nil {
			t.Fatal(err)
		}
		p := &profile.Profile{
			SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
			Location:   []*profile.Location{{ID: 1, Address: addr + 1}},
		}
		p.Sample = []*profile.Sample{{Location: p.Location, Value: []int64{1}}}
		st, err := profiles.Symbolize(p, []*gosym.Table{tab})
		tab.Close()
		if err != nil {
			t.Fatal(err)
		}
		lines := p.Location[0].Line
		if len(lines) != 1 || lines[0].Function.Name != "gosym_c_work" || lines[0].Function.Filename != "" || lines[0].Line != 0 {
			t.Errorf("C address %#x: lines %v, stats %+v", addr+1, lines, st)
		}
		if st.Symbols != 1 {
			t.Errorf("stats %+v, want one location named from the symbol table", st)
		}
	}
}
