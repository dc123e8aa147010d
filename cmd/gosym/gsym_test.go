package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/gsym"
)

// TestGsym writes a GSYM file and checks, at addresses in and around every
// function, that it answers as ResolveLocations does, frame by frame (an
// address outside the functions: ErrPCNotFound both ways); that "-o -"
// writes the same bytes to standard output; and the errors.
func TestGsym(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	tab := openTable(t, b.Path)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gsym")
	if got := mustRun(t, "", "gsym", b.Path, "-o", out); got != "" {
		t.Errorf("stdout %q", got)
	}
	r, err := gsym.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var frames, locs []gosym.Location
	checked := 0
	for _, pc := range addrsOf(t, tab, 3) {
		frames, err = r.Lookup(pc, frames)
		lerr := err
		locs, err = tab.ResolveLocations(pc, locs)
		if errors.Is(err, gosym.ErrPCNotFound) != errors.Is(lerr, gosym.ErrPCNotFound) || err == nil && lerr != nil {
			t.Fatalf("%#x: the GSYM file says %v, the binary %v", pc, lerr, err)
		}
		if err != nil {
			continue
		}
		for i := range locs {
			locs[i] = gosym.Location{Function: locs[i].Function, File: locs[i].File, Line: locs[i].Line}
		}
		if !slices.Equal(frames, locs) {
			t.Errorf("%#x: gsym %v, gosym %v", pc, frames, locs)
		}
		checked++
	}
	t.Logf("%d addresses agree", checked)

	// To standard output: the same bytes.
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRun(t, "", "gsym", "-o", "-", b.Path); got != string(data) {
		t.Errorf("gsym -o - wrote %d bytes, -o FILE %d", len(got), len(data))
	}

	// llvm-gsymutil reads it, where it is installed (gsym's tests compare
	// its answers everywhere).
	if tool, err := exec.LookPath("llvm-gsymutil-14"); err == nil {
		fn, err := tab.LookupFunction("main.main")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(tool, out, fmt.Sprintf("--address=%#x", fn.Entry()))
		got, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(got, []byte(": main.main @ ")) {
			t.Errorf("%s --address=%#x: %v\n%s", tool, fn.Entry(), err, got)
		}
	}

	// Errors: no -o; a directory that does not exist, named as given,
	// with no file left behind.
	if _, errOut, status := gosymCmd(t, "", "gsym", b.Path); status != 2 || !strings.Contains(errOut, "missing -o OUT") {
		t.Errorf("gsym without -o: status %d, stderr %q", status, errOut)
	}
	bad := filepath.Join(dir, "nodir", "out.gsym")
	if _, errOut, status := gosymCmd(t, "", "gsym", b.Path, "-o", bad); status != 1 || errOut != "gosym: "+bad+": no such file or directory\n" {
		t.Errorf("gsym -o %s: status %d, stderr %q", bad, status, errOut)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left in %s: %v", dir, ents)
	}
}

// TestGsymProgress checks the progress line, as if stderr were a
// terminal.
func TestGsymProgress(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	defer func(f func(io.Writer) bool, d, tick time.Duration) {
		isTerminal, progressDelay, progressTick = f, d, tick
	}(isTerminal, progressDelay, progressTick)
	isTerminal = func(io.Writer) bool { return true }
	progressDelay, progressTick = 0, time.Millisecond
	out := filepath.Join(t.TempDir(), "out.gsym")
	_, errOut, status := gosymCmd(t, "", "gsym", b.Path, "-o", out)
	prefix := "\rgosym gsym: " + b.Path + ": "
	if status != 0 || !strings.HasPrefix(errOut, prefix) || !strings.HasSuffix(errOut, " MB written\x1b[K\n") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("progress: status %d, stderr %q", status, errOut)
	}
}
