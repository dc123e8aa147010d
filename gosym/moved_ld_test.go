package gosym

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/garbletest"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// TestMovedTableLinkerScript moves the table with a real linker script,
// as Amazon Linux 2023's containerd has it: the corpus's test program is
// linked externally (-linkmode=external) with GNU ld's default script
// changed so that the .gopclntab input sections go into another output
// section, .data.rel.ro (where containerd has them) or .rodata (after Go's
// read-only data, in the section's middle). The output has no .gopclntab
// section; the table is found by its symbol, and, once the symbols are
// stripped (objcopy --strip-all), by the scan of the section that holds
// it. Every PC is checked against the program's own runtime.CallersFrames
// self-report.
func TestMovedTableLinkerScript(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	for _, tool := range []string{"go", "gcc", "ld", "objcopy"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	out, err := exec.Command("ld", "--verbose").Output()
	if err != nil {
		t.Skipf("ld --verbose: %v", err)
	}
	// The default script is between two lines of '='.
	parts := strings.Split(string(out), "==================================================")
	if len(parts) < 3 {
		t.Skip("ld --verbose printed no default linker script")
	}
	script := parts[1]
	src := garbletest.CopyModule(t, filepath.Join(testcorpus.Dir(), "..", "src", "gopath", "src", "gosymtest"), "gosymtest")
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module gosymtest\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		section string
		rule    *regexp.Regexp // the output section statement whose input list gets *(.gopclntab) at its end
	}{
		{".data.rel.ro", regexp.MustCompile(`(?m)^(\s*\.data\.rel\.ro\s*:\s*\{.*)\}\s*$`)},
		{".rodata", regexp.MustCompile(`(?m)^(\s*\.rodata\s*:\s*\{.*)\}\s*$`)},
	} {
		t.Run(strings.TrimPrefix(c.section, "."), func(t *testing.T) {
			if !c.rule.MatchString(script) {
				t.Skipf("ld's default script has no %s statement on one line", c.section)
			}
			dir := t.TempDir()
			ld := filepath.Join(dir, "script.ld")
			if err := os.WriteFile(ld, []byte(c.rule.ReplaceAllString(script, "$1 *(.gopclntab) }")), 0o644); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(dir, "moved")
			cmd := exec.Command("go", "build", "-o", bin, "-ldflags=-linkmode=external -extldflags=-Wl,-T,"+ld, ".")
			cmd.Dir = src
			cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=", "GOTOOLCHAIN=local")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go build with the linker script: %v\n%s", err, b)
			}
			stripped := bin + "-stripped"
			if b, err := exec.Command("objcopy", "--strip-all", bin, stripped).CombinedOutput(); err != nil {
				t.Fatalf("objcopy --strip-all: %v\n%s", err, b)
			}
			checkLinkerScriptLayout(t, bin, c.section)
			b, err := exec.Command(bin, "-selfreport").Output()
			if err != nil {
				t.Fatalf("%s -selfreport: %v", bin, err)
			}
			rep, err := testcorpus.ParseReport(b)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []struct{ path, foundBy string }{
				{bin, "symbol runtime.pclntab"},
				{stripped, "scan of section " + c.section},
			} {
				tab, err := Open(v.path)
				if err != nil {
					t.Fatal(err)
				}
				in := tab.Info()
				if in.FoundBy != v.foundBy {
					t.Errorf("%s: found by %q; want %q", filepath.Base(v.path), in.FoundBy, v.foundBy)
				}
				a := compareSelfReport(t, tab, rep, testcorpus.MinorVersion(rep.GoVersion))
				if a.unexplained() > 0 {
					t.Errorf("%s: %d of %d PCs disagree with the self-report", filepath.Base(v.path), a.unexplained(), a.checked)
				}
				t.Logf("%s: found by %q, %d PCs agree with the self-report", filepath.Base(v.path), in.FoundBy, a.checked)
				tab.Close()
			}
		})
	}
}

// checkLinkerScriptLayout checks that the linker script did its work: no
// .gopclntab section, and the table's symbol inside section sec.
func checkLinkerScriptLayout(t *testing.T, bin, sec string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Section(".gopclntab") != nil {
		t.Fatal("the output still has a .gopclntab section")
	}
	s := f.Section(sec)
	if s == nil {
		t.Fatalf("no %s section", sec)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, sym := range syms {
		if sym.Name == "runtime.pclntab" {
			if sym.Value < s.Addr || sym.Value >= s.Addr+s.Size {
				t.Fatalf("runtime.pclntab at %#x, outside %s [%#x, %#x)", sym.Value, sec, s.Addr, s.Addr+s.Size)
			}
			t.Logf("runtime.pclntab at %#x, %#x bytes into %s [%#x, %#x)", sym.Value, sym.Value-s.Addr, sec, s.Addr, s.Addr+s.Size)
			return
		}
	}
	t.Fatal("no runtime.pclntab symbol")
}
