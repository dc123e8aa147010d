package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/symbfile"
)

// TestSymbfile writes the ranges and the return pads of a binary and
// checks that they answer as the binary does: every sampled address for
// the ranges, every return pad for the pads.
func TestSymbfile(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	tab := openTable(t, b.Path)
	dir := t.TempDir()
	check := func(r *symbfile.Reader, pc uint64) {
		t.Helper()
		got, err := r.Lookup(pc, nil)
		want, werr := tab.ResolveLocations(pc, nil)
		if errors.Is(werr, gosym.ErrPCNotFound) {
			if !errors.Is(err, gosym.ErrPCNotFound) {
				t.Errorf("%#x: the symbfile says %v, %v; the binary %v", pc, got, err, werr)
			}
			return
		}
		if err != nil || werr != nil || len(got) != len(want) {
			t.Fatalf("%#x: the symbfile says %v, %v; the binary %v, %v", pc, got, err, want, werr)
		}
		for i, l := range want {
			if got[i] != (gosym.Location{Function: l.Function, File: l.File, Line: l.Line}) {
				t.Errorf("%#x: the symbfile says %v; the binary %v", pc, got, want)
				return
			}
		}
	}

	out := filepath.Join(dir, "ranges.symbfile")
	if got := mustRun(t, "", "symbfile", "-o", out, b.Path); got != "" {
		t.Errorf("stdout %q", got)
	}
	r, err := symbfile.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.NumRanges() == 0 || r.NumReturnPads() != 0 {
		t.Errorf("%d ranges, %d return pads", r.NumRanges(), r.NumReturnPads())
	}
	addrs := addrsOf(t, tab, 3)
	for _, pc := range addrs {
		check(r, pc)
	}

	pads := filepath.Join(dir, "pads.symbfile")
	mustRun(t, "", "symbfile", "-returnpads", b.Path, "-o", pads)
	p, err := symbfile.Open(pads)
	if err != nil {
		t.Fatal(err)
	}
	if p.NumRanges() != 0 || p.NumReturnPads() < 1000 {
		t.Errorf("%d ranges, %d return pads", p.NumRanges(), p.NumReturnPads())
	}
	// Check every PC where the pads file has an answer.
	n := 0
	var buf []gosym.Location
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		for pc := f.Entry(); pc < f.End(); pc++ {
			if buf, err = p.Lookup(pc, buf); err == nil {
				check(p, pc)
				n++
			}
		}
	}
	if n != p.NumReturnPads() {
		t.Errorf("%d return pads found of %d", n, p.NumReturnPads())
	}
	t.Logf("%d addresses, %d return pads checked", len(addrs), n)

	// To standard output, by default.
	stdout := mustRun(t, "", "symbfile", b.Path)
	if data, err := os.ReadFile(out); err != nil || !bytes.Equal(data, []byte(stdout)) {
		t.Errorf("symbfile to standard output differs from -o OUT (%v)", err)
	}

	// Errors: an architecture whose calls are not decoded, and an OUT
	// that cannot be written, with nothing left behind.
	s390 := corpusEntry(t, "go1.17.13.linux-s390x")
	if _, errOut, status := gosymCmd(t, "", "symbfile", "-returnpads", "-o", filepath.Join(dir, "x"), s390.Path); status != 1 || !strings.Contains(errOut, "cannot find return pads in s390x code") {
		t.Errorf("symbfile -returnpads of s390x: status %d, stderr %q", status, errOut)
	}
	bad := filepath.Join(dir, "nodir", "out")
	if _, errOut, status := gosymCmd(t, "", "symbfile", "-o", bad, b.Path); status != 1 || errOut != "gosym: "+bad+": no such file or directory\n" {
		t.Errorf("symbfile -o %s: status %d, stderr %q", bad, status, errOut)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("files left in %s: %v", dir, ents)
	}
}

// TestSymbfileProgress checks the progress display, as if stderr were a
// terminal.
func TestSymbfileProgress(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	defer func(f func(io.Writer) bool, d, tick time.Duration) {
		isTerminal, progressDelay, progressTick = f, d, tick
	}(isTerminal, progressDelay, progressTick)
	isTerminal = func(io.Writer) bool { return true }
	progressDelay, progressTick = 0, time.Millisecond
	out := filepath.Join(t.TempDir(), "out")
	_, errOut, status := gosymCmd(t, "", "symbfile", "-returnpads", b.Path, "-o", out)
	prefix := "\rgosym symbfile: " + b.Path + ": "
	if status != 0 || !strings.HasPrefix(errOut, prefix) || !strings.HasSuffix(errOut, " MB written\x1b[K\n") ||
		strings.Count(errOut, "\n") != 1 {
		t.Errorf("progress: status %d, stderr %q", status, errOut)
	}
}
