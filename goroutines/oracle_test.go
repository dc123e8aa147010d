package goroutines_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/elfcore"
	"github.com/gosym-dev/gosym/goroutines"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/coretest"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/oracle"
	"github.com/gosym-dev/gosym/internal/rtlayout"
	"github.com/gosym-dev/gosym/object"
)

// printed is a goroutine of the runtime's GOTRACEBACK=crash output.
type printed struct {
	id        uint64
	status    string // in the brackets, before any comma
	frames    []oracle.TracebackFrame
	createdBy string // "F in goroutine N" or "F", "" if none
	createdAt string // "FILE:LINE"
}

// parsePrinted returns the goroutines the runtime printed with frames,
// by id (the first time each is printed with frames), goroutine 0 (the
// threads' g0 stacks) left out.
func parsePrinted(output string) map[uint64]*printed {
	out := map[uint64]*printed{}
	byHeader := map[string][]oracle.TracebackFrame{}
	for _, g := range oracle.ParseTraceback(output) {
		if len(g.Frames) > 0 && byHeader[g.Header] == nil {
			byHeader[g.Header] = g.Frames
		}
	}
	sc := bufio.NewScanner(strings.NewReader(output))
	sc.Buffer(nil, 1<<20)
	var cur *printed
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "goroutine ") && strings.HasSuffix(line, ":"):
			cur = nil
			f := strings.Fields(line)
			id, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil || id == 0 || out[id] != nil || byHeader[line] == nil {
				continue
			}
			i, j := strings.LastIndexByte(line, '['), strings.LastIndexByte(line, ']')
			if i < 0 || j < i {
				continue
			}
			st, _, _ := strings.Cut(line[i+1:j], ",")
			cur = &printed{id: id, status: st, frames: byHeader[line]}
			out[id] = cur
		case cur != nil && strings.HasPrefix(line, "created by "):
			cur.createdBy = strings.TrimPrefix(line, "created by ")
			if sc.Scan() {
				at := strings.TrimPrefix(sc.Text(), "\t")
				at, _, _ = strings.Cut(at, " ")
				cur.createdAt = at
			}
		}
	}
	return out
}

// ours returns g's physical frames as the runtime prints them. Before Go
// 1.21 the runtime printed the position of the frame a preemption
// interrupted (under runtime.asyncPreempt) at its PC-1, as a return
// address, though its PC is the interrupted instruction (LookupPC's):
// with oldAsync, so do we.
func ours(p *goroutines.Process, g goroutines.Goroutine, oldAsync bool) ([]oracle.TracebackFrame, error) {
	var out []oracle.TracebackFrame
	var locs []gosym.Location
	for fr, err := range p.Frames(g) {
		if err != nil {
			return out, err
		}
		tf := oracle.TracebackFrame{Func: oracle.PrintName(fr.Func.Name()), SP: fr.SP, PC: fr.PC}
		pc := fr.LookupPC()
		if oldAsync && len(out) > 0 && out[len(out)-1].Func == "runtime.asyncPreempt" && pc > fr.Func.Entry() && pc == fr.PC {
			pc--
		}
		if locs, err = fr.Func.ResolveLocations(pc, locs); err == nil && len(locs) > 0 {
			tf.File, tf.Line = locs[len(locs)-1].File, locs[len(locs)-1].Line
		}
		out = append(out, tf)
	}
	return out, nil
}

// asPanic returns frames with runtime.gopanic named "panic" where want
// names it so, as the runtime's traceback prints it.
func asPanic(frames, want []oracle.TracebackFrame) []oracle.TracebackFrame {
	out := append([]oracle.TracebackFrame(nil), frames...)
	for i := range out {
		if out[i].Func == "runtime.gopanic" && i < len(want) && want[i].Func == "panic" {
			out[i].Func = "panic"
		}
	}
	return out
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

// agreement counts what a comparison found.
type agreement struct {
	printed, listed, status, frames, created, physical int
	// suffix counts the running goroutines whose printed frames are
	// the outer ones of ours: the runtime prints a crashing goroutine
	// from where it panicked, and its thread went on into the crash
	// code (fatalpanic, crash, raise).
	suffix   int
	statuses map[string]int // the statuses of the goroutines that agree
	refused  bool           // the core was refused as another binary's
}

// requireAll fails t unless every goroutine the runtime printed (at least
// 8) agrees in status, every frame and creator, or the core was refused
// as another binary's.
func requireAll(t *testing.T, bin string, a agreement) {
	t.Helper()
	if a.refused {
		return
	}
	if a.printed < 8 || a.frames != a.printed || a.status != a.printed || a.created != a.printed {
		t.Errorf("%s: of %d goroutines printed, %d have the same status, %d the same frames, %d the same creator; want all", bin, a.printed, a.status, a.frames, a.created)
	}
}

// compare lists the goroutines of the core with binary (the stripped
// program or its unstripped twin) and compares every goroutine the
// runtime printed with ours.
func compare(t *testing.T, binary string, run *coretest.Run, release string) agreement {
	t.Helper()
	tab, err := gosym.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	core := openCore(t, run.Core)
	p, err := goroutines.New(tab, core, core.Threads)
	if err != nil && binary != run.Binary && errors.Is(err, goroutines.ErrNotFound) && !sameData(t, binary, run.Binary) {
		// The twin's data is elsewhere (Go 1.12's is a page
		// further): the core is another binary's, whose list is not
		// in this one's bss. Refusing it is right; where the list is
		// found all the same (data a few bytes off, the code at the
		// same addresses), every goroutine must agree below.
		t.Logf("%s: data not at the stripped twin's addresses; its core refused: %v", binary, err)
		return agreement{refused: true}
	}
	if err != nil {
		t.Fatalf("%s: %v", binary, err)
	}
	want := parsePrinted(run.Output)
	a := agreement{statuses: map[string]int{}}
	a.printed = len(want)
	listed := map[uint64]bool{}
	for g, err := range p.All() {
		if err != nil {
			t.Errorf("a damaged entry in a sound core: %v", err)
			continue
		}
		listed[g.ID] = true
		w, ok := want[g.ID]
		if !ok {
			t.Logf("goroutine %d [%s] listed, not printed by the runtime", g.ID, g.StatusString)
			continue
		}
		a.listed++
		if g.StatusString != w.status {
			t.Errorf("goroutine %d: status %q, the runtime printed %q", g.ID, g.StatusString, w.status)
		} else {
			a.status++
		}
		got, err := ours(p, g, rtlayout.Less(rtlayout.Minor(release), "go1.21"))
		if err != nil {
			t.Errorf("goroutine %d: %v", g.ID, err)
		}
		if g.Status == goroutines.Running && len(got) > len(w.frames) && sameFrames(asPanic(got[len(got)-len(w.frames):], w.frames), w.frames) {
			a.frames++
			a.suffix++
			a.physical += len(w.frames)
			a.statuses[g.StatusString]++
		} else if !sameFrames(got, w.frames) {
			t.Errorf("goroutine %d [%s] (thread %d, regs %+v):\nours:\n%s\nruntime:\n%s", g.ID, g.StatusString, g.Thread, g.Regs, formatFrames(got), formatFrames(w.frames))
		} else {
			a.frames++
			a.physical += len(got)
			a.statuses[g.StatusString]++
		}
		cb, at := createdBy(tab, g)
		if cb != w.createdBy || at != w.createdAt {
			t.Errorf("goroutine %d: created by %q at %q, the runtime printed %q at %q", g.ID, cb, at, w.createdBy, w.createdAt)
		} else {
			a.created++
		}
	}
	for id, w := range want {
		if !listed[id] {
			t.Errorf("goroutine %d [%s] printed by the runtime, not listed", id, w.status)
		}
	}
	if a.printed < 8 {
		t.Errorf("only %d goroutines printed with frames", a.printed)
	}
	t.Logf("%s %s %s: %d goroutines printed by the runtime; listed %d, same status %d, same frames %d (%d of them the outer frames of a running goroutine's; %d physical frames: function, file:line, pc, sp), same creator %d",
		release, core.GOARCH(), binary[strings.LastIndexByte(binary, '/')+1:], a.printed, a.listed, a.status, a.frames, a.suffix, a.physical, a.created)
	return a
}

// sameData reports whether the writable sections of two binaries are at
// the same addresses.
func sameData(t *testing.T, a, b string) bool {
	t.Helper()
	var secs [2][]string
	for i, name := range []string{a, b} {
		obj, err := object.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		hs, err := obj.Sections()
		obj.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			if h.Flags&object.SectionWrite != 0 {
				secs[i] = append(secs[i], fmt.Sprintf("%s %#x %#x", h.Name, h.Addr, h.Size))
			}
		}
	}
	return slices.Equal(secs[0], secs[1])
}

// createdBy formats g's creator as the runtime prints it.
func createdBy(tab *gosym.Table, g goroutines.Goroutine) (string, string) {
	if g.CreatedPC == 0 || g.ID == 1 {
		return "", ""
	}
	fn, err := tab.ResolveFunction(g.CreatedPC)
	if err != nil {
		return "?", ""
	}
	s := oracle.PrintName(fn.Name())
	if g.ParentID != 0 {
		s += fmt.Sprintf(" in goroutine %d", g.ParentID)
	}
	pc := g.CreatedPC
	if pc > fn.Entry() {
		pc--
	}
	locs, err := fn.ResolveLocations(pc, nil)
	if err != nil || len(locs) == 0 {
		return s, ""
	}
	return s, fmt.Sprintf("%s:%d", locs[0].File, locs[0].Line)
}

// crash runs coretest's program (gosym/testdata/unwindprog: goroutines
// spinning on their own threads, parked ones, the runtime's own) with
// the toolchain of version ("" for the installed one) until it dies of
// SIGQUIT under GOTRACEBACK=crash.
func crash(t *testing.T, version string) *coretest.Run {
	return crashOn(t, coretest.Targets[0], version)
}

// crashOn is crash for the target tg (natively, or under qemu-user).
func crashOn(t *testing.T, tg coretest.Target, version string) *coretest.Run {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the oracle runs on linux/amd64 hosts")
	}
	v := version
	if v == "" {
		v = runtime.Version()
	}
	if _, ok := rtlayout.Lookup(v, tg.GOARCH); !ok {
		t.Skipf("no layout for %s on %s", v, tg.GOARCH)
	}
	goroot := ""
	if version != "" {
		var err error
		if goroot, err = coretest.Toolchain(version); err != nil {
			t.Skip(err)
		}
	}
	dir := t.TempDir()
	run, err := coretest.Crash(dir, tg, goroot)
	if errors.Is(err, coretest.ErrUnavailable) && tg.GOARCH == "386" {
		run, err = crash386(t, dir, tg, goroot)
	}
	if errors.Is(err, coretest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// qemu386Tries is how many times crash386 runs the program.
const qemu386Tries = 3

// crash386 runs the 386 program under qemu-i386, where the kernel does not
// run it (no IA-32 emulation): qemu-i386 (7.2) has been seen to deliver
// signals to Go's 386 runtime unreliably (a SIGTRAP once in a few runs
// under -race; with asynchronous preemption on, faults in the runtime
// itself), so a run that does not die of SIGQUIT is retried, and after
// qemu386Tries such runs the test is skipped. A run that does is compared
// like any other.
func crash386(t *testing.T, dir string, tg coretest.Target, goroot string) (*coretest.Run, error) {
	t.Helper()
	var errs []error
	for range qemu386Tries {
		run, err := coretest.CrashUnder(dir, tg, "qemu-i386", goroot)
		if err == nil || errors.Is(err, coretest.ErrUnavailable) {
			return run, err
		}
		t.Logf("qemu-i386: %.300s", err)
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("%w: qemu-i386 did not run the program to its SIGQUIT in %d tries", coretest.ErrUnavailable, len(errs))
}

// TestRuntimeOracle is the oracle of the package: the runtime's own
// traceback of every goroutine (GOTRACEBACK=crash: id, status, every
// physical frame's function, file:line, pc= and sp=, and the creator) of
// the process whose core is read. Every goroutine it printed must be
// listed, from the stripped binary and from its unstripped twin, with
// the same status, frames and creator: the spinning ones from their
// threads' registers across the signal frames, the parked ones from
// their saved context.
func TestRuntimeOracle(t *testing.T) {
	run := crash(t, "")
	for _, bin := range []string{run.Binary, run.Unstripped} {
		requireAll(t, bin, compare(t, bin, run, runtime.Version()))
	}
}

// TestRuntimeOracleArches is TestRuntimeOracle for the other
// architectures coretest runs (under qemu-user, natively for 386 where
// the kernel runs it) that have a layout (a heavy oracle: GOSYM_HEAVY=1):
// every goroutine the runtime printed must agree, the spinning ones
// across their threads' signal frames.
func TestRuntimeOracleArches(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	for _, tg := range coretest.Targets[1:] {
		t.Run(tg.GOARCH, func(t *testing.T) {
			run := crashOn(t, tg, "")
			for _, bin := range []string{run.Binary, run.Unstripped} {
				requireAll(t, bin, compare(t, bin, run, runtime.Version()))
			}
		})
	}
}

// oracleReleases are the releases TestRuntimeOracleReleases runs.
var oracleReleases = []string{"go1.12.17", "go1.14.15", "go1.16.15", "go1.18.10", "go1.21.13", "go1.24.13", "go1.27.4"}

// TestRuntimeOracleReleases is TestRuntimeOracle with the toolchains of
// other releases (a heavy oracle: GOSYM_HEAVY=1).
func TestRuntimeOracleReleases(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	for _, v := range oracleReleases {
		t.Run(v, func(t *testing.T) {
			run := crash(t, v)
			for _, bin := range []string{run.Binary, run.Unstripped} {
				requireAll(t, bin, compare(t, bin, run, v))
			}
		})
	}
}

// oracleReleaseArches are the releases TestRuntimeOracleReleaseArches
// runs on each architecture: the oldest and newest with a layout, and
// releases between (the list but for the installed release,
// which TestRuntimeOracleArches runs).
var oracleReleaseArches = oracleReleases

// TestRuntimeOracleReleaseArches is TestRuntimeOracleArches with the
// toolchains of other releases: release × architecture (a heavy oracle:
// GOSYM_HEAVY=1; GOSYM_ORACLE_RELEASES, a comma-separated list, runs
// those releases instead). An architecture that cannot run here (386
// without IA-32 emulation) or has no layout is skipped, saying why.
func TestRuntimeOracleReleaseArches(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	releases := oracleReleaseArches
	if s := os.Getenv("GOSYM_ORACLE_RELEASES"); s != "" {
		releases = strings.Split(s, ",")
	}
	for _, v := range releases {
		for _, tg := range coretest.Targets[1:] {
			t.Run(v+"/"+tg.GOARCH, func(t *testing.T) {
				run := crashOn(t, tg, v)
				for _, bin := range []string{run.Binary, run.Unstripped} {
					requireAll(t, bin, compare(t, bin, run, v))
				}
			})
		}
	}
}

// openCore reads the core file at path, open for the rest of the test.
func openCore(t *testing.T, path string) *elfcore.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	core, err := elfcore.NewFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return core
}

// openProcess opens binary's Table and the core at corePath for the rest
// of the test, and finds the core's goroutines.
func openProcess(t *testing.T, binary, corePath string) (*gosym.Table, *elfcore.File, *goroutines.Process) {
	t.Helper()
	tab, err := gosym.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close() })
	core := openCore(t, corePath)
	p, err := goroutines.New(tab, core, core.Threads)
	if err != nil {
		t.Fatalf("%s: %v", binary, err)
	}
	return tab, core, p
}
