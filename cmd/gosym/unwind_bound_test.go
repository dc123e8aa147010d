//go:build unix

package main

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/coretest"
)

// loopingCore returns a core of an amd64 process running the binary of
// tab with the given number of threads, whose stacks never end: each
// thread's PC is the entry of a function, and its stack, the core's one
// segment of words words, holds that entry's address plus one over and
// over, a return address into the same function at SP delta 0, frame
// after frame (the shape of the reproducer r07 of issue 21).
func loopingCore(t testing.TB, tab *gosym.Table, threads, words int) []byte {
	t.Helper()
	fn, err := tab.LookupFunction("main.main")
	if err != nil {
		t.Fatal(err)
	}
	const stack = 0xc000000000
	mem := make([]byte, 8*words)
	for i := 0; i < len(mem); i += 8 {
		binary.LittleEndian.PutUint64(mem[i:], fn.Entry()+1)
	}
	var ths []coretest.Thread
	for i := range threads {
		regs := make([]uint64, 27)                         // elf_gregset_t of amd64
		regs[16], regs[19] = fn.Entry(), stack+uint64(8*i) // rip, rsp
		ths = append(ths, coretest.Thread{PID: uint32(1000 + i), Regs: regs})
	}
	return coretest.Mini(elf.EM_X86_64, elf.ELFCLASS64, binary.LittleEndian, ths, stack, mem)
}

// TestUnwindBounded checks that gosym unwind prints at most -frames
// frames a thread (100 by default) and says where it stopped, however
// long the stack (issue 21 item 6: a 77 KB core printed 4.2 million
// lines): the output grows with the threads, not with the stack.
func TestUnwindBounded(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	dir := t.TempDir()
	core := filepath.Join(dir, "core")
	const threads, words = 3, 1024
	if err := os.WriteFile(core, loopingCore(t, openTable(t, b.Path), threads, words), 0o644); err != nil {
		t.Fatal(err)
	}
	// The stack is hostile: unbounded, it gives a frame per word.
	all := mustRun(t, "", "unwind", "-frames", "100000", b.Path, core)
	if n := strings.Count(all, "\n"); n < threads*words/2 {
		t.Fatalf("the looping core unwinds to only %d lines:\n%s", n, all)
	}
	for _, c := range []struct {
		flags []string
		max   int
	}{
		{nil, 100},
		{[]string{"-frames", "7"}, 7},
	} {
		out := mustRun(t, "", append(append([]string{"unwind"}, c.flags...), b.Path, core)...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if want := threads * (c.max + 2); len(lines) != want {
			t.Errorf("unwind %q: %d lines, want %d (%d threads of %d frames, each with its header and the line saying why it stopped)", c.flags, len(lines), want, threads, c.max)
		}
		stops := 0
		for _, l := range lines {
			if strings.HasPrefix(l, fmt.Sprintf("\tunwinding stopped: more than %d frames, at pc 0x", c.max)) {
				stops++
			}
		}
		if stops != threads {
			t.Errorf("unwind %q: %d threads say they stopped at %d frames, want %d:\n%s", c.flags, stops, c.max, threads, out)
		}
	}
	if _, errOut, status := gosymCmd(t, "", "unwind", "-frames", "0", b.Path, core); status != 1 || !strings.Contains(errOut, "-frames 0") {
		t.Errorf("unwind -frames 0: status %d, stderr %q", status, errOut)
	}
}

// TestUnwindRegularCoreOnly checks that CORE must be a regular file: a
// FIFO without a writer, a device that never ends and a directory are
// refused at once (issue 21 item 5: a FIFO blocked for ever, /dev/zero was
// read until memory ran out).
func TestUnwindRegularCoreOnly(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	dir := t.TempDir()
	cores := []string{"/dev/zero", dir}
	if fifo := filepath.Join(dir, "fifo"); syscall.Mkfifo(fifo, 0o644) == nil {
		cores = append(cores, fifo)
	}
	for _, core := range cores {
		_, errOut, status := gosymCmd(t, "", "unwind", b.Path, core)
		if status != 1 || !strings.HasPrefix(errOut, "gosym: "+core+": ") {
			t.Errorf("unwind %s: status %d, stderr %q", core, status, errOut)
		}
	}
}
