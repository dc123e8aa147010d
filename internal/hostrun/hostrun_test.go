package hostrun

import (
	"bytes"
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// TestExit386 checks the probe program with debug/elf: a 386 executable
// whose entry is the start of its code, in its one loadable segment.
func TestExit386(t *testing.T) {
	f, err := elf.NewFile(bytes.NewReader(exit386()))
	if err != nil {
		t.Fatal(err)
	}
	if f.Class != elf.ELFCLASS32 || f.Machine != elf.EM_386 || f.Type != elf.ET_EXEC {
		t.Fatalf("class %v machine %v type %v", f.Class, f.Machine, f.Type)
	}
	if len(f.Progs) != 1 || f.Progs[0].Type != elf.PT_LOAD || f.Entry != f.Progs[0].Vaddr+84 || f.Progs[0].Filesz != 93 {
		t.Fatalf("entry %#x, program headers %+v", f.Entry, f.Progs)
	}
}

// TestCommand runs the probe program the way Command says it runs here:
// it must exit 0 wherever Prefix finds a way.
func TestCommand(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("linux/amd64 only")
	}
	t.Logf("native 386: %v", Native("386"))
	if !Native("amd64") {
		t.Fatal("Native(amd64) is false on an amd64 host")
	}
	dir := t.TempDir()
	exe := dir + "/exit386"
	if err := writeExe(exe, exit386()); err != nil {
		t.Fatal(err)
	}
	cmd, err := Command(context.Background(), "386", exe)
	if err != nil {
		if _, lerr := exec.LookPath("qemu-i386"); lerr != nil {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
}

func writeExe(path string, b []byte) error { return os.WriteFile(path, b, 0o755) }
