//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/coretest"
	"github.com/gosym-dev/gosym/internal/oracle"
)

// gdbFrame is one frame of gdb's backtrace: a physical frame (with the
// address gdb prints for every frame but the innermost) or an inlined one.
type gdbFrame struct {
	addr     string // "0x45e08b", "" for frame #0 and inlined frames
	function string
	fileLine string
}

var (
	gdbThread = regexp.MustCompile(`^Thread \d+ \(LWP (\d+)\)`)
	gdbEntry  = regexp.MustCompile(`^#\d+\s+(?:0x0*([0-9a-f]+) in )?(\S+) \(.*\) at (\S+:\d+)$`)
)

// gdbBacktraces runs gdb on the unstripped twin and the core, and returns
// each thread's frames, across the signal frames ("<signal handler
// called>", which gosym's walk crosses too on linux/amd64). Further gdb
// commands (cmds) run before the backtrace.
func gdbBacktraces(t *testing.T, bin, core string, cmds ...string) map[string][]gdbFrame {
	args := []string{"-batch", "-nx", "-ex", "set pagination off"}
	for _, c := range cmds {
		args = append(args, "-ex", c)
	}
	out, err := exec.Command("gdb", append(args, "-ex", "thread apply all bt", bin, core)...).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	bts := map[string][]gdbFrame{}
	var tid string
	for _, line := range strings.Split(string(out), "\n") {
		if m := gdbThread.FindStringSubmatch(line); m != nil {
			tid = m[1]
			continue
		}
		if tid == "" || strings.Contains(line, "<signal handler called>") {
			continue
		}
		if m := gdbEntry.FindStringSubmatch(line); m != nil {
			addr := ""
			if m[1] != "" {
				addr = "0x" + m[1]
			}
			bts[tid] = append(bts[tid], gdbFrame{addr, m[2], m[3]})
		}
	}
	return bts
}

// unwindFrame is one line of "gosym unwind": a frame, physical or inlined.
type unwindFrame struct {
	pc, sp   uint64
	function string
	fileLine string
	inlined  bool // an inlined call: the physical frame is on a later line
}

// parseUnwind returns the frames "gosym unwind" printed for each thread,
// by thread ID. A walk that stops with an error fails the test, but for a
// thread whose own PC is in no function of the binary (in the vDSO, say),
// which is returned in outside, without frames, if allowOutside is set.
func parseUnwind(t *testing.T, out string, allowOutside bool) (threads map[string][]unwindFrame, outside map[string]bool) {
	threads, outside = map[string][]unwindFrame{}, map[string]bool{}
	var tid string
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "thread "); ok {
			tid, _, _ = strings.Cut(rest, " ")
			threads[tid] = nil
			continue
		}
		if msg, ok := strings.CutPrefix(line, "\tunwinding stopped: "); ok {
			if allowOutside && len(threads[tid]) == 0 && strings.HasSuffix(msg, ": pc in no function: "+gosym.ErrPCNotFound.Error()) {
				t.Logf("thread %s is outside the binary's functions: %s", tid, msg)
				outside[tid] = true
			} else {
				t.Errorf("thread %s: %s", tid, msg)
			}
			continue
		}
		f := strings.Split(strings.TrimPrefix(line, "\t"), "\t")
		if len(f) < 4 || tid == "" {
			if line != "" {
				t.Errorf("thread %s: %q", tid, line)
			}
			continue
		}
		pc, err1 := strconv.ParseUint(strings.TrimPrefix(f[0], "0x"), 16, 64)
		sp, err2 := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
		if err1 != nil || err2 != nil || len(f) > 5 || len(f) == 5 && f[4] != "inlined" {
			t.Errorf("thread %s: bad line %q", tid, line)
			continue
		}
		threads[tid] = append(threads[tid], unwindFrame{pc, sp, f[2], f[3], len(f) == 5})
	}
	return threads, outside
}

// asGDB returns a thread's frames as gdb shows them: gdb prints the
// address of every physical frame but the innermost, on the first
// (innermost) line of the frame's inlined calls; our lines repeat it on
// each. Nor does gdb print the address of a frame a signal interrupted
// (the one after runtime.sigtramp), whose PC is the instruction itself.
func asGDB(frames []unwindFrame) []gdbFrame {
	var out []gdbFrame
	first := true // the next line starts a physical frame
	prev := ""    // the previous physical frame's function
	for _, f := range frames {
		fr := gdbFrame{function: f.function, fileLine: f.fileLine}
		if first && len(out) > 0 && prev != "runtime.sigtramp" {
			fr.addr = fmt.Sprintf("%#x", f.pc)
		}
		out = append(out, fr)
		first = !f.inlined
		if first {
			prev = f.function
		}
	}
	return out
}

// physicalFrames returns a thread's physical frames, as the runtime
// prints them.
func physicalFrames(frames []unwindFrame) []oracle.TracebackFrame {
	var out []oracle.TracebackFrame
	for _, f := range frames {
		if !f.inlined {
			out = append(out, oracle.TracebackFrame{Func: oracle.PrintName(f.function), PC: f.pc, SP: f.sp})
		}
	}
	return out
}

// compareGDB compares every thread's frames with gdb's backtrace and
// returns the number of frames that agree. gdb walks on where the
// runtime's unwinder, and ours, stop: from runtime.mstart (a top frame)
// into runtime.clone, and from a function that switches stacks
// (runtime.mcall, runtime.systemstack...), by its CFI, into frames that
// are not its callers. Where our walk ended at such a function, gdb's
// frames are compared up to it. Threads in outside (parseUnwind) are not
// compared.
func compareGDB(t *testing.T, bin string, got map[string][]unwindFrame, outside map[string]bool, want map[string][]gdbFrame) int {
	t.Helper()
	tab, err := gosym.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	if len(got) != len(want) || len(got) == 0 {
		t.Errorf("%d threads, gdb shows %d", len(got), len(want))
	}
	frames := 0
	for tid, w := range want {
		if outside[tid] {
			continue
		}
		g := asGDB(got[tid])
		if n := len(got[tid]); n > 0 && len(w) > len(g) {
			if f, err := tab.ResolveFunction(got[tid][n-1].pc); err == nil && (f.Kind() == gosym.KindTop || f.Kind() == gosym.KindStackSwitch) {
				w = w[:len(g)]
			}
		}
		// gdb does not go on past main.main ("backtrace past-main" is
		// off): where its backtrace ends there, ours is compared up to it.
		if n := len(w); n > 0 && len(g) > n && w[n-1].function == "main.main" {
			g = g[:n]
		}
		// A signal that interrupts a call into the vDSO (nanotime1,
		// walltime) finds the stack pointer realigned for C, out of
		// reach of the frame tables: the walk stops there (gdb goes on
		// with the DWARF CFI, from the register the old SP was saved
		// in). A prefix of gdb's frames, then, not a wrong one.
		if n := len(g); n > 0 && n < len(w) && slices.Equal(g, w[:n]) && vdsoCaller(g[n-1].function) {
			t.Logf("thread %s: the walk stops in %s, interrupted in a vDSO call (gdb: %d more frames)", tid, g[n-1].function, len(w)-n)
			frames += n
			continue
		}
		if !slices.Equal(g, w) {
			t.Errorf("thread %s:\ngosym unwind:\n%v\ngdb:\n%v", tid, g, w)
			continue
		}
		frames += len(w)
	}
	return frames
}

// vdsoCaller reports whether the runtime function calls into the vDSO on
// a stack it realigns (its frame size does not describe it there).
func vdsoCaller(name string) bool {
	return name == "runtime.nanotime1" || name == "runtime.walltime" || name == "runtime.walltime1"
}

// TestUnwindCommand runs "gosym unwind" on the stripped binary and the
// core of coretest's crash (linux/amd64, natively) and compares each
// thread's stack with gdb's backtrace from the unstripped twin, which gdb
// unwinds with the DWARF CFI and symbolizes with the DWARF line tables:
// the same functions, inlined ones included, at the same file:line, and
// the same PCs for the physical frames.
func TestUnwindCommand(t *testing.T) {
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("no gdb (apt-get install gdb; .ci/run does)")
	}
	cr, err := coretest.Crash(t.TempDir(), coretest.Targets[0], "")
	if errors.Is(err, coretest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if status := run([]string{"unwind", "-frames", "1000", cr.Binary, cr.Core}, nil, &stdout, &stderr); status != 0 {
		t.Fatalf("status %d: %s", status, stderr.String())
	}
	want := gdbBacktraces(t, cr.Unstripped, cr.Core)
	threads, _ := parseUnwind(t, stdout.String(), false)
	frames := compareGDB(t, cr.Binary, threads, nil, want)
	t.Logf("%d threads, %d frames agree with gdb", len(want), frames)
}

// gcoreAttempts bounds the captures TestUnwindCommandGcore makes until one
// catches a spinning goroutine's thread in its code.
const gcoreAttempts = 3

// TestUnwindCommandGcore runs "gosym unwind" on a core written by gdb's
// gcore while coretest's program ran (GOSYM_GCORE=1, as .ci/run sets; the
// core takes about 1.2 GB), and checks it against two oracles:
//
//   - gdb's backtrace of every thread, from the unstripped twin's DWARF,
//     as TestUnwindCommand does: every frame the command prints, for
//     every thread, wherever gcore stopped it;
//   - the runtime's frames (PC, SP, function) of the spinning goroutines,
//     printed when SIGQUIT killed the program just after gcore: a thread
//     caught in a spinning goroutine's loop (its function, at the SP the
//     runtime printed) must show exactly those frames, but for the
//     innermost PC, the thread's own register, which may be at the other
//     instruction of the loop (coretest's Goroutine.SameFrames).
//
// Where gcore stops a thread depends on the scheduler: on a loaded
// machine a spinning goroutine's thread can be caught elsewhere (in the
// runtime, or descheduled before its loop), and then only gdb vouches for
// its frames. At least one thread must be in a spinning goroutine's
// loop: if none is, the capture is made again, at most gcoreAttempts
// times, and the test says so.
func TestUnwindCommandGcore(t *testing.T) {
	if os.Getenv("GOSYM_GCORE") != "1" {
		t.Skip("set GOSYM_GCORE=1 to run (gcore writes about 1.2 GB; .ci/run does)")
	}
	for attempt := 1; ; attempt++ {
		caught, spinning := unwindGcore(t)
		if t.Failed() {
			return
		}
		if caught > 0 {
			t.Logf("capture %d: %d of %d spinning goroutines caught in their code by gcore show the runtime's frames", attempt, caught, spinning)
			return
		}
		if attempt == gcoreAttempts {
			t.Fatalf("%d captures: no thread was in a spinning goroutine's code when gcore stopped the program", attempt)
		}
		t.Logf("capture %d: no thread was in a spinning goroutine's code when gcore stopped the program; capturing again", attempt)
	}
}

// unwindGcore makes one capture for TestUnwindCommandGcore and checks it.
// It returns the number of spinning goroutines whose thread gcore caught
// in their code, and the number of spinning goroutines.
func unwindGcore(t *testing.T) (caught, spinning int) {
	dir, err := os.MkdirTemp("", "gosym-gcore-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir) // the core, before the next capture
	cr, err := coretest.Gcore(dir, "amd64")
	if errors.Is(err, coretest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if status := run([]string{"unwind", "-frames", "1000", cr.Binary, cr.Core}, nil, &stdout, &stderr); status != 0 {
		t.Fatalf("status %d: %s", status, stderr.String())
	}
	threads, outside := parseUnwind(t, stdout.String(), true)
	compareGDB(t, cr.Binary, threads, outside, gdbBacktraces(t, cr.Unstripped, cr.Core))

	want := coretest.Spinning(cr.Output)
	if len(want) != 3 {
		t.Fatalf("%d spinning goroutines in the runtime's output, want 3:\n%s", len(want), cr.Output)
	}
	spinning = len(want)
	for tid, frames := range threads {
		got := physicalFrames(frames)
		if len(got) == 0 {
			continue
		}
		g, ok := want[got[0].SP]
		if !ok || !g.InLoop(got) {
			continue // not in a spinning goroutine's code
		}
		delete(want, g.SP)
		if !g.SameFrames(got) {
			t.Errorf("thread %s, running %s:\ngosym unwind:\n%v\nruntime:\n%v", tid, g.Header, got, g.Frames)
			continue
		}
		caught++
	}
	for _, g := range want {
		t.Logf("%s at pc=%#x sp=%#x: its thread was elsewhere when gcore stopped the program", g.Header, g.PC, g.SP)
	}
	return caught, spinning
}
