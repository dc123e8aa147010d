package gosym

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
)

// TestNoTable checks that executables without a Go symbol table get
// ErrNoTable: a C program, and the system's own tools.
func TestNoTable(t *testing.T) {
	var paths []string
	if gcc, err := exec.LookPath("gcc"); err == nil {
		dir := t.TempDir()
		src := filepath.Join(dir, "prog.c")
		if err := os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o666); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "prog")
		if msg, err := exec.Command(gcc, "-o", out, src).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, msg)
		}
		paths = append(paths, out)
	}
	for _, p := range []string{"/bin/true", "/bin/sh"} {
		if _, err := os.Stat(p); err == nil {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		t.Skip("no C executable at hand")
	}
	for _, p := range paths {
		tab, err := Open(p)
		if !errors.Is(err, ErrNoTable) {
			t.Errorf("Open(%s) = %v, %v; want ErrNoTable", p, tab, err)
		}
		// The error says what and where, what was looked for and found.
		if want := "gosym: " + p + ": no Go symbol table (looked for sections .gopclntab"; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Open(%s): %q, want %q...", p, err, want)
		}
	}
}

// TestOpenNotRegular checks that Open refuses devices, FIFOs, sockets and
// directories at once, naming the file: gosym info /dev/zero once read
// gigabytes, and a FIFO without a writer blocked forever.
func TestOpenNotRegular(t *testing.T) {
	objtest.CheckOpenNotRegular(t, "Open", func(name string) error {
		tab, err := Open(name)
		if tab != nil {
			tab.Close()
		}
		return err
	})
}
