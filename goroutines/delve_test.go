package goroutines_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/goroutines"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/oracle"
)

// dlvVersion is the Delve the second opinion runs.
const dlvVersion = "v1.27.2"

// dlvPath returns Delve's command, built once with go install into a
// cache directory (os.UserCacheDir()/gosym-dlv-VERSION), as the other
// heavy tests cache their tools. It skips, saying why, where it cannot be
// built (no module proxy).
func dlvPath(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(cache, "gosym-dlv-"+dlvVersion)
	exe := filepath.Join(dir, "dlv")
	if _, err := os.Stat(exe); err == nil {
		return exe
	}
	cmd := exec.Command("go", "install", "github.com/go-delve/delve/cmd/dlv@"+dlvVersion)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=", "CGO_ENABLED=0", "GOOS=", "GOARCH=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("cannot build Delve %s (go install): %v\n%s", dlvVersion, err, out)
	}
	return exe
}

// dlvFrame is a frame of Delve's "goroutines -t": inlined calls are
// frames of their own, at the PC of the physical frame.
type dlvFrame struct {
	PC   uint64
	Func string
	File string
	Line int
}

// dlvGoroutine is a goroutine of Delve's "goroutines -t".
type dlvGoroutine struct {
	ID     uint64
	Status string // the wait reason in brackets, "" if none printed
	Thread int
	Frames []dlvFrame
}

var (
	ansi      = regexp.MustCompile("\x1b\\[[0-9;]*m")
	dlvHeader = regexp.MustCompile(`^[* ] Goroutine (\d+) - .*?(?: \(thread (\d+)\))?(?: \[([^\]]+)\])?$`)
	dlvFrameL = regexp.MustCompile(`^\t\s*\d+\s+0x([0-9a-f]+) in (.+)$`)
	dlvAt     = regexp.MustCompile(`^\t\s+at (.*):(-?\d+)$`)
)

// parseDelve parses the output of Delve's "goroutines -t N".
func parseDelve(out string) []dlvGoroutine {
	var gs []dlvGoroutine
	for _, line := range strings.Split(ansi.ReplaceAllString(out, ""), "\n") {
		if m := dlvHeader.FindStringSubmatch(line); m != nil {
			id, _ := strconv.ParseUint(m[1], 10, 64)
			tid, _ := strconv.Atoi(m[2])
			gs = append(gs, dlvGoroutine{ID: id, Thread: tid, Status: m[3]})
			continue
		}
		if len(gs) == 0 {
			continue
		}
		g := &gs[len(gs)-1]
		if m := dlvFrameL.FindStringSubmatch(line); m != nil {
			pc, _ := strconv.ParseUint(m[1], 16, 64)
			g.Frames = append(g.Frames, dlvFrame{PC: pc, Func: m[2]})
		} else if m := dlvAt.FindStringSubmatch(line); m != nil && len(g.Frames) > 0 {
			fr := &g.Frames[len(g.Frames)-1]
			fr.File = m[1]
			fr.Line, _ = strconv.Atoi(m[2])
		}
	}
	return gs
}

// runDelve runs Delve on a core non-interactively (an --init script:
// "goroutines -t 200", exit) and returns what it printed.
func runDelve(t *testing.T, dlv, binary, core string) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "init")
	if err := os.WriteFile(script, []byte("goroutines -t 200\nexit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(dlv, "core", binary, core, "--init", script, "--allow-non-terminal-interactive=true")
	// Delve prints the files under its working directory relative to
	// it: run it elsewhere.
	cmd.Dir = t.TempDir()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	if err != nil {
		t.Fatalf("dlv core %s: %v\n%s", binary, err, out.String())
	}
	return out.String()
}

// The differences between Delve and ours that the second opinion names;
// each is the same stack seen from another side, not a wrong frame.
const (
	// Delve walks C code (its DWARF CFI, on the g0 stack): the frames
	// crosscall2, C.<export>, runtime.asmcgocall and ??? (C without
	// debug information); the runtime and ours go from
	// runtime.cgocallback to the goroutine's own frames
	// (runtime.systemstack_switch, runtime.cgocall).
	diffCFrames = "Delve shows C frames on the g0 stack; the runtime and ours cross from cgocallback to systemstack_switch"
	// A goroutine blocked in C: Delve starts from its thread's registers
	// (in C: ???) and meets runtime.cgocall at asmcgocall's return; the
	// runtime and ours start from g.syscallpc, entersyscall's return in
	// runtime.cgocall.
	diffSyscallPC = "Delve's runtime.cgocall is at asmcgocall's return, ours (the runtime's) at entersyscall's (g.syscallpc)"
	// The first frame of a saved context: Delve gives the line at the
	// saved PC, the runtime and ours the line of the call it returns from
	// (PC-1).
	diffFirstLine = "Delve's line of a saved PC is the next instruction's, ours (the runtime's) the call's"
	// A running goroutine whose thread is in a signal handler entered
	// through the C library's restorer: Delve crosses it, ours does not
	// (gosym/unwind_signal.go): an error, no frames. Since the restorer
	// is crossed, this no longer happens on amd64 and arm64.
	diffRestorer = "ours stops at the C library's signal restorer (an error); Delve crosses it"
	// A running goroutine whose thread is in a signal handler: Delve
	// starts with the handler's frames on the signal stack (runtime.raise
	// of dieFromSignal, sigfwdgo, sigtrampgo); the goroutine's frames,
	// as the runtime's traceback prints them and ours lists them, start
	// at the frame the signal interrupted.
	diffHandler = "Delve shows the signal handler's frames on the signal stack; ours (the runtime's) start at the interrupted frame"
	// The frame a signal interrupted: Delve gives the line of PC-1, as
	// for a return address; the runtime (from Go 1.21) and ours the
	// line of the PC, the instruction interrupted.
	diffTrapLine = "Delve's line of an interrupted PC is the previous instruction's, ours (the runtime's) the PC's"
	// Delve leaves out the caller of a frame a signal interrupted
	// (runtime.dieFromSignal under runtime.raise) and of the frame
	// whose fault runtime.sigpanic reports (main.main under main.deref);
	// the runtime's traceback prints the second, and ours both.
	diffSkipped = "Delve leaves out the caller of an interrupted or faulting frame; the runtime and ours show it"
	// Go 1.26's _Gdeadextra goroutine of an extra M between calls from C:
	// Delve lists it (runtime.goexit, no status), the runtime's
	// traceback and ours leave it out as dead.
	diffDeadExtra = "Delve lists the extra M's dead goroutine (_Gdeadextra), the runtime and ours do not"
	// A PC whose line in the line table is 0 (the jump back of an empty
	// for {} loop, in an inlined call): ours is 0, as the table says,
	// Delve's -2.
	diffLineZero = "line 0 in the line table: ours 0, Delve's -2"
)

// cBoundary reports whether Delve's frame is one of the C side of a cgo
// call (diffCFrames).
func cBoundary(f string) bool {
	return f == "???" || f == "crosscall2" || strings.HasPrefix(f, "C.") || f == "runtime.asmcgocall"
}

// oursInlined returns g's frames as Delve prints them: every inlined
// call a frame at its physical frame's PC, the physical frame's function
// last, with its file:line.
func oursInlined(p *goroutines.Process, g goroutines.Goroutine) ([]dlvFrame, error) {
	var out []dlvFrame
	var locs []gosym.Location
	for fr, err := range p.Frames(g) {
		if err != nil {
			return out, err
		}
		locs, err = fr.Func.ResolveLocations(fr.LookupPC(), locs[:0])
		if err != nil || len(locs) == 0 {
			out = append(out, dlvFrame{PC: fr.PC, Func: fr.Func.Name()})
			continue
		}
		for _, l := range locs {
			out = append(out, dlvFrame{PC: fr.PC, Func: oracle.PrintName(l.Function), File: l.File, Line: int(l.Line)})
		}
	}
	return out, nil
}

// compareDelve compares Delve's goroutines with ours, from binary, on
// the core: the same goroutines, statuses and frames (function, PC,
// file:line) but for the named differences, which it counts. Any other
// difference is an error.
func compareDelve(t *testing.T, binary, corePath string, dlv []dlvGoroutine) map[string]int {
	t.Helper()
	tab, core, p := openProcess(t, binary, corePath)
	byID := map[uint64]dlvGoroutine{}
	for _, g := range dlv {
		byID[g.ID] = g
	}
	named := map[string]int{}
	same := 0
	seen := map[uint64]bool{}
	for g, err := range p.All() {
		if err != nil {
			t.Errorf("a damaged entry in a sound core: %v", err)
			continue
		}
		seen[g.ID] = true
		d, ok := byID[g.ID]
		if !ok {
			t.Errorf("goroutine %d [%s]: listed by us, not by Delve", g.ID, g.StatusString)
			continue
		}
		if d.Status != "" && d.Status != g.StatusString {
			t.Errorf("goroutine %d: status %q, Delve's %q", g.ID, g.StatusString, d.Status)
		}
		if d.Thread != 0 && g.Thread != 0 && d.Thread != g.Thread {
			t.Errorf("goroutine %d: thread %d, Delve's %d", g.ID, g.Thread, d.Thread)
		}
		ours, err := oursInlined(p, g)
		if err != nil {
			if g.Status == goroutines.Running && len(ours) == 0 {
				if _, limit := foreignRestorer(tab, core, g.Thread); limit {
					named[diffRestorer]++
					t.Logf("goroutine %d: %s", g.ID, diffRestorer)
					continue
				}
			}
			t.Errorf("goroutine %d: %v", g.ID, err)
			continue
		}
		diffs, bad := delveDiff(ours, d.Frames, g.Status == goroutines.Syscall)
		for _, dd := range diffs {
			named[dd]++
		}
		if bad != "" {
			t.Errorf("goroutine %d [%s]: %s\nours:\n%s\nDelve:\n%s", g.ID, g.StatusString, bad, formatDlv(ours), formatDlv(d.Frames))
			continue
		}
		if len(diffs) == 0 || len(diffs) == 1 && diffs[0] == diffFirstLine {
			same++
		}
		t.Logf("goroutine %d [%s]: %d frames (%d Delve's) agree; %v", g.ID, g.StatusString, len(ours), len(d.Frames), diffs)
	}
	for _, d := range dlv {
		if seen[d.ID] {
			continue
		}
		if len(d.Frames) == 1 && d.Frames[0].Func == "runtime.goexit" && d.Status == "" {
			named[diffDeadExtra]++
			continue
		}
		t.Errorf("goroutine %d: listed by Delve, not by us", d.ID)
	}
	t.Logf("%s: %d goroutines, %d listed by Delve; %d the same frame for frame; named differences: %v", filepath.Base(binary), len(seen), len(dlv), same, named)
	return named
}

// delveDiff compares our frames of a goroutine with Delve's and returns
// the named differences found, and what else differs ("" if nothing).
// Frames are matched after dropping Delve's C frames and our
// runtime.systemstack_switch frames where Delve shows C frames instead
// (diffCFrames); a runtime.cgocall frame may be at another PC in a
// goroutine in a system call (diffSyscallPC); the first frame's line may
// differ by the saved-PC rule (diffFirstLine).
func delveDiff(ours, dlv []dlvFrame, syscall bool) (named []string, bad string) {
	add := func(s string) {
		if !slices.Contains(named, s) {
			named = append(named, s)
		}
	}
	var d []dlvFrame
	for _, f := range dlv {
		if cBoundary(f.Func) || f.PC == 0 {
			add(diffCFrames)
			continue
		}
		d = append(d, f)
	}
	// The signal handler's frames, up to runtime.sigtrampgo, are on the
	// signal stack: the goroutine's own begin after them.
	trap := false
	if k := slices.IndexFunc(d, func(f dlvFrame) bool { return f.Func == "runtime.sigtrampgo" }); k >= 0 && k+1 < len(d) {
		d = d[k+1:]
		add(diffHandler)
		trap = true
	}
	o := ours
	if slices.Contains(named, diffCFrames) {
		// A goroutine blocked in C, from its thread: Delve's first
		// Go frame is runtime.systemstack_switch, whose stack
		// switch asmcgocall made (ours starts at runtime.cgocall).
		if syscall && len(d) > 0 && d[0].Func == "runtime.systemstack_switch" && (len(o) == 0 || o[0].Func != d[0].Func) {
			d = d[1:]
		}
		// Where Delve walks the C code between cgocallback and
		// cgocall, the runtime and ours show systemstack_switch.
		o = nil
		for i, f := range ours {
			if f.Func == "runtime.systemstack_switch" && i > 0 && ours[i-1].Func == "runtime.cgocallback" {
				continue
			}
			o = append(o, f)
		}
	}
	// Where Delve leaves out the caller of an interrupted frame or of
	// the frame sigpanic reports, ours is compared without it.
	if len(o) > len(d) {
		var kept []dlvFrame
		skip := len(o) - len(d)
		for i, f := range o {
			if skip > 0 && i > 0 && i < len(o)-1 && len(kept) < len(d) && f.Func != d[len(kept)].Func &&
				((trap && i == countAt(o, o[0].PC)) || i >= 2 && o[i-2].Func == "runtime.sigpanic") {
				skip--
				add(diffSkipped)
				continue
			}
			kept = append(kept, f)
		}
		o = kept
	}
	if len(o) != len(d) {
		return named, fmt.Sprintf("%d frames, Delve %d (C frames and systemstack_switch left out)", len(o), len(d))
	}
	for i := range o {
		a, b := o[i], d[i]
		if a.Func != b.Func {
			return named, fmt.Sprintf("frame %d: %s, Delve's %s", i, a.Func, b.Func)
		}
		if trap && i == 0 && a.PC == b.PC && a.File == b.File && b.Line < a.Line {
			add(diffTrapLine)
			continue
		}
		if a.PC != b.PC {
			if syscall && a.Func == "runtime.cgocall" {
				add(diffSyscallPC)
				continue
			}
			return named, fmt.Sprintf("frame %d (%s): pc %#x, Delve's %#x", i, a.Func, a.PC, b.PC)
		}
		if a.File == b.File && a.Line == 0 && b.Line == -2 {
			add(diffLineZero)
			continue
		}
		if a.File != b.File || a.Line != b.Line {
			if a.PC == ours[0].PC && i < countAt(o, o[0].PC) && b.Line > a.Line {
				add(diffFirstLine)
				continue
			}
			return named, fmt.Sprintf("frame %d (%s): %s:%d, Delve's %s:%d", i, a.Func, a.File, a.Line, b.File, b.Line)
		}
	}
	return named, ""
}

// countAt returns how many of the first frames are at pc (a physical
// frame and its inlined calls).
func countAt(fs []dlvFrame, pc uint64) int {
	n := 0
	for n < len(fs) && fs[n].PC == pc {
		n++
	}
	return n
}

func formatDlv(fs []dlvFrame) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\t%#x %s %s:%d\n", f.PC, f.Func, f.File, f.Line)
	}
	return b.String()
}

// TestDelveCgo is the second opinion of Delve (dlv core, its
// "goroutines -t") on the core of the cgo program (testdata/cgoprog,
// dead of its nil dereference), from the unstripped twin: Delve needs
// DWARF, and on the stripped binary finds no goroutine (checked). Ours,
// from the stripped binary and from the twin, must list the same
// goroutines with the same statuses, threads and frames (function, PC,
// file:line, inlined calls included), but for the named differences
// (diffCFrames...), each counted and logged. A heavy test
// (GOSYM_HEAVY=1): Delve is built once (about a minute) and cached.
func TestDelveCgo(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	dlv := dlvPath(t)
	run := crashCgo(t, cgoAMD64, false)
	stripped := ansi.ReplaceAllString(runDelve(t, dlv, run.Binary, run.Core), "")
	if !strings.Contains(stripped, "could not find goroutine array") {
		t.Errorf("Delve on the stripped binary: expected it to find no goroutine, it printed:\n%s", stripped)
	}
	t.Logf("Delve on the stripped binary: %s", strings.TrimSpace(stripped))
	gs := parseDelve(runDelve(t, dlv, run.Unstripped, run.Core))
	if len(gs) < 8 {
		t.Fatalf("Delve listed %d goroutines", len(gs))
	}
	for _, bin := range []string{run.Binary, run.Unstripped} {
		compareDelve(t, bin, run.Core, gs)
	}
}
