//go:build linux

package main

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/elfcore"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/coretest"
	"github.com/gosym-dev/gosym/internal/oracle"
)

// TestUnwindCommandPIE is TestUnwindCommand for a position-independent
// build of coretest's program (-buildmode=pie, linux/amd64, natively),
// which the kernel loads far from its link-time addresses. It checks:
//
//   - the load bias (elfcore.Image.Relocation) is not 0, so the rest
//     tests something;
//   - every goroutine the runtime printed with pc= and sp=, unwound
//     through the relocation's view of the core, gives the runtime's
//     frames: function, PC and SP, as the process had them;
//   - "gosym unwind" prints, for every thread, the frames gdb shows with
//     the unstripped twin's symbols (where gdb is installed), at run-time
//     PCs;
//   - the core paired with another binary (the unstripped twin: another
//     build ID) is refused, naming both build IDs.
func TestUnwindCommandPIE(t *testing.T) {
	checkUnwindPIE(t, "")
}

// TestUnwindCommandPIEReleases is TestUnwindCommandPIE for the programs
// built by the Go releases listed in GOSYM_UNWIND_RELEASES (as gosym's
// TestUnwindReleases, whose toolchains it shares).
func TestUnwindCommandPIEReleases(t *testing.T) {
	list := os.Getenv("GOSYM_UNWIND_RELEASES")
	if list == "" {
		t.Skip("set GOSYM_UNWIND_RELEASES to a list of Go releases to run (go1.12.17,go1.16.15)")
	}
	for _, version := range strings.Split(list, ",") {
		t.Run(version, func(t *testing.T) {
			goroot, err := coretest.Toolchain(version)
			if err != nil {
				t.Fatal(err)
			}
			checkUnwindPIE(t, goroot)
		})
	}
}

// checkUnwindPIE makes TestUnwindCommandPIE's checks on the program built
// by the toolchain at goroot ("" for the installed one).
func checkUnwindPIE(t *testing.T, goroot string) {
	cr, err := coretest.Crash(t.TempDir(), coretest.Targets[0], goroot, "-buildmode=pie")
	if errors.Is(err, coretest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}

	tab, err := gosym.Open(cr.Binary)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	ef, err := elf.Open(cr.Binary)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	fh, err := os.Open(cr.Core)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	core, err := elfcore.NewFile(fh)
	if err != nil {
		t.Fatal(err)
	}
	im, err := core.Image()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := im.Relocation(ef)
	if err != nil {
		t.Fatal(err)
	}
	if ef.Type != elf.ET_DYN || rel.Bias == 0 {
		t.Fatalf("%v binary, %+v: not a relocated PIE", ef.Type, rel)
	}
	// The kernel dumps the executable's first page, and so its build ID;
	// qemu-user (which coretest uses where the kernel pipes cores to a
	// program) leaves it out.
	pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	kernelCore := !bytes.HasPrefix(pattern, []byte("|"))
	if kernelCore && im.GoBuildID == "" {
		t.Fatalf("image %+v: the core does not hold the build ID", im)
	}
	mem := rel.View(core, 8, core.ByteOrder)
	agree, frames := 0, 0
	for _, g := range coretest.Goroutines(cr.Output, "") {
		regs := gosym.Regs{PC: rel.ToLink(g.PC), SP: g.SP, Saved: !g.Signal}
		var got []oracle.TracebackFrame
		for fr, err := range tab.Unwind(regs, mem) {
			if err != nil {
				t.Errorf("%s: %v", g.Header, err)
				break
			}
			got = append(got, oracle.TracebackFrame{Func: oracle.PrintName(fr.Func.Name()), PC: rel.ToRun(fr.PC), SP: fr.SP})
		}
		if !sameTraceback(got, g.Frames) {
			t.Errorf("%s:\nUnwind:\n%v\nruntime:\n%v", g.Header, got, g.Frames)
			continue
		}
		agree++
		frames += len(got)
	}
	if agree < 5 {
		t.Errorf("only %d goroutines agree with the runtime", agree)
	}
	t.Logf("load bias %#x: %d goroutines, %d frames agree with the runtime's", rel.Bias, agree, frames)

	var stdout, stderr bytes.Buffer
	if status := run([]string{"unwind", "-frames", "1000", cr.Binary, cr.Core}, nil, &stdout, &stderr); status != 0 {
		t.Fatalf("status %d: %s", status, stderr.String())
	}
	threads, _ := parseUnwind(t, sigtrampNotTop(t, stdout.String()), false)
	if len(threads) != len(core.Threads) {
		t.Errorf("%d threads printed, the core has %d", len(threads), len(core.Threads))
	}
	for tid, frames := range threads {
		if len(frames) == 0 {
			t.Errorf("thread %s: no frame", tid)
		}
		for _, f := range frames {
			if f.pc < rel.Start+rel.Bias || f.pc >= rel.End+rel.Bias {
				t.Errorf("thread %s: pc %#x is not a run-time address of the binary", tid, f.pc)
			}
		}
	}
	if _, err := exec.LookPath("gdb"); err == nil {
		// gdb places the PIE by its program headers, which differ
		// (slightly) between the twins: it runs on the stripped binary
		// with the twin's symbols at the bias.
		gdb := gdbBacktraces(t, cr.Binary, cr.Core, fmt.Sprintf("symbol-file -o %#x %s", rel.Bias, cr.Unstripped))
		// Before Go 1.17 runtime.sigtramp is not TOPFRAME: the walk
		// goes on to the signal's return (runtime.sigreturn, or a
		// value that is no return address), and so does gdb where it
		// does not see a signal frame (1.12): both are compared up to
		// runtime.sigtramp, where gdb's signal frame stops it from 1.17.
		upToSigtramp := func(fn string) bool { return fn == "runtime.sigtramp" }
		for tid, frames := range threads {
			if i := slices.IndexFunc(frames, func(f unwindFrame) bool { return upToSigtramp(f.function) }); i >= 0 {
				threads[tid] = frames[:i+1]
			}
		}
		for tid, frames := range gdb {
			if i := slices.IndexFunc(frames, func(f gdbFrame) bool { return upToSigtramp(f.function) }); i >= 0 {
				gdb[tid] = frames[:i+1]
			}
		}
		if goroot != "" {
			// An old release's thread whose innermost frame gdb shows
			// without a file:line ("?? ()") has no frames in gdb's
			// parsed backtrace: it is not compared (seen with 1.12).
			for tid := range threads {
				if _, ok := gdb[tid]; !ok {
					t.Logf("thread %s: gdb shows no frame with a file:line", tid)
					delete(threads, tid)
				}
			}
		}
		n := compareGDB(t, cr.Binary, threads, nil, gdb)
		t.Logf("%d threads, %d frames agree with gdb", len(threads), n)
	} else {
		t.Log("no gdb (apt-get install gdb; .ci/run does): frames not compared with gdb's")
	}

	stdout.Reset()
	stderr.Reset()
	status := run([]string{"unwind", cr.Unstripped, cr.Core}, nil, &stdout, &stderr)
	want := fmt.Sprintf("gosym: %s: %s is not the binary the process ran (%s): %v: the executable's Go build ID is ", cr.Core, cr.Unstripped, cr.Binary, elfcore.ErrMismatch)
	if !kernelCore {
		return // no build ID to compare
	}
	if status != 1 || stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), want) || !strings.Contains(stderr.String(), im.GoBuildID) {
		t.Errorf("another binary: status %d, stdout %q, stderr %q; want the prefix %q and %q", status, stdout.String(), stderr.String(), want, im.GoBuildID)
	}
}

// sameTraceback reports whether two tracebacks have the same functions
// at the same PCs and SPs.
func sameTraceback(a, b []oracle.TracebackFrame) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Func != b[i].Func || a[i].PC != b[i].PC || a[i].SP != b[i].SP {
			return false
		}
	}
	return true
}

// sigtrampNotTop returns the output of gosym unwind without the lines
// that say a walk stopped at a PC in no function just after
// runtime.sigtramp or runtime.sigreturn: before Go 1.17 sigtramp is not
// TOPFRAME, and the walk goes on past the signal frame, where the
// runtime's own unwinder stopped too (gosym's TestUnwindRuntime).
func sigtrampNotTop(t *testing.T, out string) string {
	lines := strings.Split(out, "\n")
	kept := lines[:0]
	for i, l := range lines {
		if i > 0 && strings.HasPrefix(l, "\tunwinding stopped: ") && strings.Contains(l, ": pc in no function: ") &&
			(strings.Contains(lines[i-1], "\truntime.sigtramp\t") || strings.Contains(lines[i-1], "\truntime.sigreturn\t")) {
			t.Logf("past the signal frame: %s", strings.TrimPrefix(l, "\t"))
			continue
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n")
}
