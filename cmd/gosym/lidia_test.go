package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/lidia"
)

// TestLidia writes Lidia files with each option and checks that they answer
// as addr2line does, frame by frame.
func TestLidia(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	tab := openTable(t, b.Path)
	var addrs []uint64
	for i, pc := range addrsOf(t, tab, 1) {
		if i%7 == 0 {
			addrs = append(addrs, pc)
		}
	}
	dir := t.TempDir()
	for _, c := range []struct {
		flags                 []string
		lines, files, inlines bool
	}{
		{nil, true, true, true},
		{[]string{"-inlines=false"}, true, true, false},
		{[]string{"-lines=false"}, false, true, true},
		{[]string{"-files=false"}, true, false, true},
	} {
		name := strings.Join(c.flags, " ")
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(dir, "out.lidia")
			args := append(append([]string{"lidia"}, c.flags...), b.Path, "-o", out)
			if got := mustRun(t, "", args...); got != "" {
				t.Errorf("stdout %q", got)
			}
			r, err := lidia.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var frames []gosym.Location
			var locs []gosym.Location
			checked := 0
			for _, pc := range addrs {
				frames, err = r.Lookup(pc, frames)
				if err != nil && !errors.Is(err, gosym.ErrPCNotFound) {
					t.Fatalf("Lookup(%#x): %v", pc, err)
				}
				lerr := err
				locs, err = tab.ResolveLocations(pc, locs)
				if err != nil {
					locs = locs[:0]
				}
				if errors.Is(err, gosym.ErrPCNotFound) != errors.Is(lerr, gosym.ErrPCNotFound) {
					t.Fatalf("%#x: the Lidia file says %v, the binary %v", pc, lerr, err)
				}
				if !c.inlines && len(locs) > 0 {
					locs = locs[len(locs)-1:]
				}
				var want []gosym.Location
				for _, l := range locs {
					f := gosym.Location{Function: l.Function, File: l.File, Line: l.Line}
					if !c.files {
						f.File = ""
					}
					if !c.lines {
						// No line tables and no call lines.
						f.Line = 0
					}
					want = append(want, f)
				}
				if fmt.Sprint(frames) != fmt.Sprint(want) {
					t.Errorf("%#x: lidia %v, gosym %v", pc, frames, want)
				}
				checked++
			}
			t.Logf("%d addresses agree", checked)
		})
	}

	// To standard output.
	out := mustRun(t, "", "lidia", "-o", "-", b.Path)
	if r, err := lidia.NewReader([]byte(out)); err != nil {
		t.Errorf("lidia -o -: %v", err)
	} else {
		r.Close()
	}

	// Errors: no -o; a directory that does not exist, and an OUT that
	// cannot be replaced, named as given (not by the temporary file's
	// name), with no file left behind.
	if _, errOut, status := gosymCmd(t, "", "lidia", b.Path); status != 2 || !strings.Contains(errOut, "missing -o OUT") {
		t.Errorf("lidia without -o: status %d, stderr %q", status, errOut)
	}
	bad := filepath.Join(dir, "nodir", "out.lidia")
	if _, errOut, status := gosymCmd(t, "", "lidia", b.Path, "-o", bad); status != 1 || errOut != "gosym: "+bad+": no such file or directory\n" {
		t.Errorf("lidia -o %s: status %d, stderr %q; want %q", bad, status, errOut, "gosym: "+bad+": no such file or directory\n")
	}
	isDir := filepath.Join(dir, "isdir")
	if err := os.Mkdir(isDir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(isDir, "f"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, errOut, status := gosymCmd(t, "", "lidia", b.Path, "-o", isDir); status != 1 || !strings.HasPrefix(errOut, "gosym: "+isDir+": ") || strings.Contains(errOut, ".tmp") {
		t.Errorf("lidia -o %s (a directory): status %d, stderr %q", isDir, status, errOut)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("files left in %s: %v", dir, ents)
	}
}

// TestLidiaProgress checks the progress display, as if stderr were a
// terminal.
func TestLidiaProgress(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	if isTerminal(new(bytes.Buffer)) {
		t.Error("a buffer is a terminal")
	}
	defer func(f func(io.Writer) bool, d, tick time.Duration) {
		isTerminal, progressDelay, progressTick = f, d, tick
	}(isTerminal, progressDelay, progressTick)
	isTerminal = func(io.Writer) bool { return true }
	progressDelay, progressTick = 0, time.Millisecond

	out := filepath.Join(t.TempDir(), "out.lidia")
	_, errOut, status := gosymCmd(t, "", "lidia", b.Path, "-o", out)
	prefix := "\rgosym lidia: " + b.Path + ": "
	if status != 0 || !strings.HasPrefix(errOut, prefix) || !strings.HasSuffix(errOut, " MB written\x1b[K\n") ||
		strings.Count(errOut, "\n") != 1 {
		t.Errorf("progress: status %d, stderr %q", status, errOut)
	}

	// Work that ends before the display's goroutine has run (a loaded
	// machine) still ends with its line: it took longer than the delay.
	for range 100 {
		var buf bytes.Buffer
		p := startProgress(&buf, "msg")
		p.stop()
		if s := buf.String(); !strings.HasPrefix(s, "\rmsg, ") || !strings.HasSuffix(s, "s\x1b[K\n") || strings.Count(s, "\n") != 1 {
			t.Fatalf("progress stopped at once: %q", s)
		}
	}

	// Not a terminal, or quick work: nothing.
	progressDelay = time.Hour
	if _, errOut, _ := gosymCmd(t, "", "lidia", b.Path, "-o", out); errOut != "" {
		t.Errorf("quick work shows progress: %q", errOut)
	}
	isTerminal = func(io.Writer) bool { return false }
	progressDelay = 0
	if _, errOut, _ := gosymCmd(t, "", "lidia", b.Path, "-o", out); errOut != "" {
		t.Errorf("progress when not on a terminal: %q", errOut)
	}
}
