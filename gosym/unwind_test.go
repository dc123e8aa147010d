//go:build linux

package gosym

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gosym-dev/gosym/elfcore"
	"github.com/gosym-dev/gosym/internal/coretest"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/oracle"
	"github.com/gosym-dev/gosym/object"
)

// crashRun is a run of coretest's program, opened.
type crashRun struct {
	tab    *Table
	output string
	core   *elfcore.File
}

var crashRuns sync.Map // release/goarch -> *crashOnce

type crashOnce struct {
	once sync.Once
	run  *crashRun
	err  error
}

// runCrash returns the crash of coretest's program for tg, made once per
// test process. It skips when the machine cannot make it (no qemu-user,
// cores sent to a program); .ci/run installs qemu-user so that CI runs
// every target.
func runCrash(t testing.TB, tg coretest.Target) *crashRun {
	return runCrashRelease(t, tg, "")
}

// runCrashRelease is runCrash with the toolchain of Go release version
// ("" for the installed one).
func runCrashRelease(t testing.TB, tg coretest.Target, version string) *crashRun {
	t.Helper()
	v, _ := crashRuns.LoadOrStore(version+"/"+tg.GOARCH, new(crashOnce))
	c := v.(*crashOnce)
	c.once.Do(func() {
		dir, err := os.MkdirTemp("", "gosym-unwind-")
		if err != nil {
			c.err = err
			return
		}
		defer os.RemoveAll(dir)
		goroot := ""
		if version != "" {
			if goroot, err = coretest.Toolchain(version); err != nil {
				c.err = err
				return
			}
		}
		run, err := coretest.Crash(dir, tg, goroot)
		if err != nil {
			c.err = err
			return
		}
		c.run, c.err = openRun(run)
	})
	if errors.Is(c.err, coretest.ErrUnavailable) {
		t.Skip(c.err)
	}
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c.run
}

// openRun reads the run's binary and opens its core.
func openRun(run *coretest.Run) (*crashRun, error) {
	bin, err := os.ReadFile(run.Binary)
	if err != nil {
		return nil, err
	}
	obj, err := object.NewBytes(bin)
	if err != nil {
		return nil, err
	}
	tab, err := NewTable(obj)
	if err != nil {
		return nil, err
	}
	// Kept open for the test process: the file can be removed meanwhile.
	f, err := os.Open(run.Core)
	if err != nil {
		return nil, err
	}
	core, err := elfcore.NewFile(f)
	if err != nil {
		return nil, err
	}
	return &crashRun{tab: tab, output: run.Output, core: core}, nil
}

// TestUnwindRuntime is the runtime oracle of Unwind: coretest's program,
// built stripped, dies of SIGQUIT under GOTRACEBACK=crash, and the runtime
// prints the frames (pc=, sp=) of every goroutine: from the signal context
// for the goroutine each thread was running (spinning goroutines, idle
// threads' g0 stacks), from the saved state for parked ones. Unwind, from
// the same registers, over the memory of the core the process left, must
// find exactly those frames. Every thread's own registers in the core
// (NT_PRSTATUS: inside the runtime's signal handler by then) must unwind,
// without error, to the top of the signal stack.
func TestUnwindRuntime(t *testing.T) {
	for _, tg := range coretest.Targets {
		t.Run(tg.GOARCH, func(t *testing.T) {
			if tg.GOARCH != "amd64" {
				objtest.SkipUnlessHeavy(t) // qemu-user runs
			}
			if tg.Qemu != "" || tg.GOARCH == "386" {
				t.Parallel()
			}
			checkCrash(t, runCrash(t, tg), tg)
		})
	}
}

// releasesEnv names the environment variable listing the Go releases
// TestUnwindReleases builds the program with ("go1.12.17,go1.16.15").
const releasesEnv = "GOSYM_UNWIND_RELEASES"

// TestUnwindReleases is TestUnwindRuntime for the programs built by the
// Go releases listed in GOSYM_UNWIND_RELEASES, whose toolchains come from
// the module proxy (golang.org/toolchain, about 70 MB each, as the
// full-matrix build fetches them): .ci/run sets it in its full-matrix
// phase.
func TestUnwindReleases(t *testing.T) {
	list := os.Getenv(releasesEnv)
	if list == "" {
		t.Skipf("set %s to a list of Go releases to run (.ci/run does)", releasesEnv)
	}
	for _, version := range strings.Split(list, ",") {
		for _, tg := range coretest.Targets {
			t.Run(version+"/"+tg.GOARCH, func(t *testing.T) {
				t.Parallel()
				checkCrash(t, runCrashRelease(t, tg, version), tg)
			})
		}
	}
}

// checkCrash compares Unwind with the runtime's frames of one crash.
func checkCrash(t *testing.T, run *crashRun, tg coretest.Target) {
	if got := run.core.GOARCH(); got != tg.GOARCH {
		t.Errorf("core's architecture %q", got)
	}
	lr := usesLRArch(tg.GOARCH)
	var signal, parked, parkedLR, frames, outside int
	for _, g := range coretest.Goroutines(run.output, tg.LR) {
		regs := Regs{PC: g.PC, SP: g.SP, LR: g.LR, Saved: !g.Signal}
		if lr && !g.Signal && len(g.Frames) > 1 {
			// A parked goroutine whose innermost function has no
			// frame at its PC (stopped in a prologue) returns to
			// its saved LR (g.sched.lr), which the runtime does not
			// print: take it from the traceback's next frame.
			if f, err := run.tab.ResolveFunction(g.PC); err == nil {
				if d, err := f.SPDelta(g.PC); err == nil && d == 0 {
					regs.LR = g.Frames[1].PC
					parkedLR++
				}
			}
		}
		got, err := unwindFrames(run.tab, regs, run.core)
		if err != nil {
			t.Errorf("%s: %v", g.Header, err)
		}
		if !sameFrames(got, g.Frames) {
			t.Errorf("%s (regs %+v):\nUnwind:\n%s\nruntime:\n%s", g.Header, regs, formatFrames(got), formatFrames(g.Frames))
			continue
		}
		frames += len(got)
		if g.Signal {
			signal++
		} else {
			parked++
		}
	}
	if signal < 4 || parked < 3 {
		t.Errorf("only %d goroutines from signal contexts and %d parked ones agree", signal, parked)
	}
	// Where the unwinder crosses signal frames, the walk of each thread
	// goes on from runtime.sigtramp into the context the signal
	// interrupted: the runtime's traceback of the goroutine the signal
	// interrupted (the first of each section of its output) must be
	// what follows the thread's last signal crossing, frame for frame.
	crosses := crossesSignals(run.tab)
	interrupted := map[[2]uint64]coretest.Goroutine{}
	for _, g := range coretest.Goroutines(run.output, tg.LR) {
		if g.Signal {
			interrupted[[2]uint64{g.PC, g.SP}] = g
		}
	}
	viaSignal := 0
	for _, th := range run.core.Threads {
		regs := Regs{PC: th.PC, SP: th.SP, LR: th.LR}
		got, err := unwindFrames(run.tab, regs, run.core)
		lastSignal := -1
		i := 0
		for fr, err := range run.tab.Unwind(regs, run.core) {
			if err != nil {
				break
			}
			if fr.Reached == ReachedSignal {
				lastSignal = i
			}
			i++
		}
		if crosses && lastSignal >= 0 && lastSignal < len(got) {
			tail := got[lastSignal:]
			if g, ok := interrupted[[2]uint64{tail[0].PC, tail[0].SP}]; ok {
				if !sameFrames(tail[:min(len(tail), len(g.Frames))], g.Frames) {
					t.Errorf("thread %d, across its signal frame:\n%s\nruntime's %s:\n%s", th.PID, formatFrames(tail), g.Header, formatFrames(g.Frames))
				} else {
					viaSignal++
				}
			}
		}
		if err == nil {
			// The walk ends at a top frame, or, past a signal
			// frame, at the stack switch an idle thread's g0 stack
			// starts with (runtime.mcall, systemstack).
			if last, _ := run.tab.ResolveFunction(got[len(got)-1].PC); last.Kind() == KindTop || lastSignal >= 0 && last.Kind() == KindStackSwitch {
				continue
			}
		}
		flagged := run.tab.hasFlags() && tg.GOARCH != "ppc64le"
		if !flagged && sigtrampNear(got) && (err == nil || errors.Is(err, ErrPCNotFound)) {
			// runtime.sigtramp is TOPFRAME from Go 1.17, except on
			// ppc64le. Before, and there, the walk goes on to its
			// caller: the kernel's (or qemu's) signal return code, or
			// runtime.sigreturn on amd64 and 386, above which the
			// signal frame holds no return address; the runtime's own
			// unwinder stopped there too, at a PC outside Go.
			outside++
			continue
		}
		t.Errorf("thread %d: unwinding ends neither at a top frame nor at runtime.sigtramp: %v\n%s", th.PID, err, formatFrames(got))
	}
	if crosses && viaSignal < len(interrupted) {
		t.Errorf("%d of the %d goroutines the signals interrupted found across the signal frames of the threads", viaSignal, len(interrupted))
	}
	t.Logf("%s: %d goroutines from signal contexts, %d parked (%d with the LR of the traceback), %d frames agree; %d threads of the core unwind to a top frame, %d to runtime.sigtramp and out of Go; %d interrupted goroutines agree across signal frames",
		tg.GOARCH, signal, parked, parkedLR, frames, len(run.core.Threads)-outside, outside, viaSignal)
}

// crossesSignals reports whether Unwind crosses the signal frames of
// tab's binary (linux on amd64 and arm64).
func crossesSignals(tab *Table) bool {
	a, ok := unwindArchOf(tab.goarch())
	return ok && a.sig != nil && tab.linux()
}

// gcoreEnv names the environment variable that enables TestUnwindGcore.
const gcoreEnv = "GOSYM_GCORE"

// gcoreAttempts bounds the captures TestUnwindGcore makes until one
// catches a spinning goroutine's thread in its code.
const gcoreAttempts = 3

// TestUnwindGcore unwinds the threads of a core written by gdb's gcore
// while coretest's program ran, from the registers of the core
// (NT_PRSTATUS). A thread caught in a spinning goroutine's loop (its
// function, at the SP the runtime printed for the goroutine when SIGQUIT
// killed the program just after) must unwind to the runtime's frames for
// it, but for the innermost PC, the thread's own register, which may be
// at the other instruction of the loop (coretest's Goroutine.SameFrames);
// every other thread must unwind without error (but for one whose own PC
// is outside the binary's functions, in the vDSO say). Where gcore stops a
// thread depends on the scheduler: on a loaded machine a spinning
// goroutine's thread can be caught elsewhere (in the runtime, or
// descheduled before its loop). At least one must be caught in its loop:
// if none is, the capture is made again, at most gcoreAttempts times, and
// the test says so. gcore writes every mapping (about 1.2 GB here), so
// the test runs only with GOSYM_GCORE=1, which .ci/run sets in its
// full-matrix phase.
func TestUnwindGcore(t *testing.T) {
	if os.Getenv(gcoreEnv) != "1" {
		t.Skipf("set %s=1 to run (gcore writes about 1.2 GB; .ci/run does)", gcoreEnv)
	}
	for _, goarch := range []string{"amd64", "386"} {
		t.Run(goarch, func(t *testing.T) {
			for attempt := 1; ; attempt++ {
				caught, spinning := unwindGcore(t, goarch)
				if t.Failed() {
					return
				}
				if caught > 0 {
					t.Logf("capture %d: %d of %d spinning goroutines caught in their code unwind to the runtime's frames", attempt, caught, spinning)
					return
				}
				if attempt == gcoreAttempts {
					t.Fatalf("%d captures: no thread was in a spinning goroutine's code when gcore stopped the program", attempt)
				}
				t.Logf("capture %d: no thread was in a spinning goroutine's code when gcore stopped the program; capturing again", attempt)
			}
		})
	}
}

// unwindGcore makes one capture for TestUnwindGcore and checks it. It
// returns the number of spinning goroutines whose thread gcore caught in
// their code, and the number of spinning goroutines.
func unwindGcore(t *testing.T, goarch string) (caught, spinning int) {
	dir, err := os.MkdirTemp("", "gosym-gcore-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir) // the core, before the next capture
	run, err := coretest.Gcore(dir, goarch)
	if errors.Is(err, coretest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(run.Binary)
	if err != nil {
		t.Fatal(err)
	}
	tab := mustTable(t, bin)
	f, err := os.Open(run.Core)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	core, err := elfcore.NewFile(f)
	if err != nil {
		t.Fatal(err)
	}
	want := coretest.Spinning(run.Output)
	if len(want) != 3 {
		t.Fatalf("%d spinning goroutines in the runtime's output, want 3:\n%s", len(want), run.Output)
	}
	spinning = len(want)
	for _, th := range core.Threads {
		got, err := unwindFrames(tab, Regs{PC: th.PC, SP: th.SP, LR: th.LR}, core)
		g, ok := want[th.SP]
		if !ok || !g.InLoop(got) {
			// Not in a spinning goroutine's code. A thread whose own PC
			// is in no function of the binary (in the vDSO, say) stops
			// at once.
			if len(got) == 0 && errors.Is(err, ErrPCNotFound) {
				t.Logf("thread %d is outside the binary's functions: %v", th.PID, err)
			} else if err != nil {
				t.Errorf("thread %d: %v\n%s", th.PID, err, formatFrames(got))
			}
			continue
		}
		delete(want, g.SP)
		if err != nil || !g.SameFrames(got) {
			t.Errorf("thread %d, running %s: %v\nUnwind:\n%s\nruntime:\n%s", th.PID, g.Header, err, formatFrames(got), formatFrames(g.Frames))
			continue
		}
		caught++
	}
	for _, g := range want {
		t.Logf("%s at pc=%#x sp=%#x: its thread was elsewhere when gcore stopped the program", g.Header, g.PC, g.SP)
	}
	return caught, spinning
}

// unwindFrames collects Unwind's frames, named as the runtime prints them.
func unwindFrames(tab *Table, regs Regs, mem *elfcore.File) ([]oracle.TracebackFrame, error) {
	var out []oracle.TracebackFrame
	var locs []Location
	for fr, err := range tab.Unwind(regs, mem) {
		if err != nil {
			return out, err
		}
		// The runtime prints the physical function's position at the
		// PC it symbolizes the frame with: LookupPC's.
		tf := oracle.TracebackFrame{Func: oracle.PrintName(fr.Func.Name()), SP: fr.SP, PC: fr.PC}
		if locs, err = fr.Func.ResolveLocations(fr.LookupPC(), locs); err == nil && len(locs) > 0 {
			tf.File, tf.Line = locs[len(locs)-1].File, locs[len(locs)-1].Line
		}
		out = append(out, tf)
	}
	if len(out) == 0 {
		return nil, errors.New("no frames")
	}
	return out, nil
}

// sigtrampNear reports whether one of the last two frames is
// runtime.sigtramp (on ppc64, the static sigtramp<> behind its function
// descriptor, named "sigtramp", or runtime._sigtramp in Go 1.12).
func sigtrampNear(fs []oracle.TracebackFrame) bool {
	for i := max(len(fs)-2, 0); i < len(fs); i++ {
		switch fs[i].Func {
		case "runtime.sigtramp", "sigtramp", "runtime._sigtramp":
			return true
		}
	}
	return false
}

func sameFrames(got, want []oracle.TracebackFrame) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].PC != want[i].PC || got[i].SP != want[i].SP || got[i].Func != want[i].Func ||
			got[i].File != want[i].File || got[i].Line != want[i].Line {
			return false
		}
	}
	return true
}

func formatFrames(fs []oracle.TracebackFrame) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\t%s pc=%#x sp=%#x %s:%d\n", f.Func, f.PC, f.SP, f.File, f.Line)
	}
	return b.String()
}

// deepest returns the host's crash run, the registers of its deepest
// spinning goroutine and a copy of that goroutine's stack, and the number
// of frames the runtime printed for it.
func deepest(tb testing.TB) (*Table, Regs, *snapshot, int) {
	run := runCrash(tb, coretest.Targets[0])
	var best coretest.Goroutine
	for _, g := range coretest.Goroutines(run.output, "") {
		if len(g.Frames) > len(best.Frames) {
			best = g
		}
	}
	lo, hi := best.SP, best.Frames[len(best.Frames)-1].SP+64
	s := &snapshot{base: lo, data: make([]byte, hi-lo)}
	if _, err := run.core.ReadAt(s.data, int64(lo)); err != nil {
		tb.Fatal(err)
	}
	return run.tab, Regs{PC: best.PC, SP: best.SP, LR: best.LR}, s, len(best.Frames)
}

// TestUnwindAllocs checks that a walk allocates the same few objects
// whatever its depth: nothing per frame.
func TestUnwindAllocs(t *testing.T) {
	tab, regs, mem, n := deepest(t)
	walk := func() {
		for _, err := range tab.Unwind(regs, mem) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	walk()
	if a := testing.AllocsPerRun(100, walk); a > 2 {
		t.Errorf("%v allocations per walk of %d frames; want at most 2, none per frame", a, n)
	}
}

// BenchmarkUnwind measures the frames Unwind finds per second on the
// deepest stack of the host's crash run (40 levels of calls: 87 frames),
// read from a copy of the stack.
func BenchmarkUnwind(b *testing.B) {
	tab, regs, mem, n := deepest(b)
	b.ReportAllocs()
	frames := 0
	for b.Loop() {
		for _, err := range tab.Unwind(regs, mem) {
			if err != nil {
				b.Fatal(err)
			}
			frames++
		}
	}
	if frames != b.N*n {
		b.Fatalf("%d frames in %d walks, want %d each", frames, b.N, n)
	}
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkCallers is, for comparison, the runtime's own unwinder on a
// stack of about the same depth in the benchmark's process
// (runtime.Callers: return addresses only, no symbolization).
func BenchmarkCallers(b *testing.B) {
	pcs := make([]uintptr, 128)
	var n int
	callersDeep(84, func() {
		b.ReportAllocs()
		for b.Loop() {
			n = runtime.Callers(0, pcs)
		}
	})
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "frames/s")
}

//go:noinline
func callersDeep(n int, f func()) {
	if n == 0 {
		f()
		return
	}
	callersDeep(n-1, f)
}
