//go:build linux

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/elfcore/coretest"
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
// each thread's frames up to the signal frame ("<signal handler called>"),
// where gosym's walk stops (runtime.sigtramp is TOPFRAME).
func gdbBacktraces(t *testing.T, bin, core string) map[string][]gdbFrame {
	out, err := exec.Command("gdb", "-batch", "-nx", "-ex", "set pagination off",
		"-ex", "thread apply all bt", bin, core).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	bts := map[string][]gdbFrame{}
	var tid string
	stopped := false
	for _, line := range strings.Split(string(out), "\n") {
		if m := gdbThread.FindStringSubmatch(line); m != nil {
			tid, stopped = m[1], false
			continue
		}
		if tid == "" || stopped {
			continue
		}
		if strings.Contains(line, "<signal handler called>") {
			stopped = true
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
	if status := run([]string{"unwind", cr.Binary, cr.Core}, nil, &stdout, &stderr); status != 0 {
		t.Fatalf("status %d: %s", status, stderr.String())
	}
	want := gdbBacktraces(t, cr.Unstripped, cr.Core)
	// Our output as gdb would show it: gdb prints the address of every
	// physical frame but the innermost, on the first (innermost) line of
	// the frame's inlined calls; our lines repeat it on each.
	got := map[string][]gdbFrame{}
	var tid string
	first := true // the next line starts a physical frame
	for _, line := range strings.Split(stdout.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "thread "); ok {
			tid, _, _ = strings.Cut(rest, " ")
			got[tid] = nil
			first = true
			continue
		}
		f := strings.Split(strings.TrimPrefix(line, "\t"), "\t")
		if len(f) < 4 {
			if line != "" {
				t.Errorf("thread %s: %q", tid, line)
			}
			continue
		}
		fr := gdbFrame{function: f[2], fileLine: f[3]}
		if first && len(got[tid]) > 0 {
			fr.addr = f[0]
		}
		got[tid] = append(got[tid], fr)
		first = len(f) == 4 // a physical frame's line ends the group
	}
	if len(got) != len(want) || len(got) == 0 {
		t.Errorf("%d threads, gdb shows %d", len(got), len(want))
	}
	frames := 0
	for tid, w := range want {
		if g := got[tid]; !sameGDB(g, w) {
			t.Errorf("thread %s:\ngosym unwind:\n%v\ngdb:\n%v", tid, g, w)
			continue
		}
		frames += len(w)
	}
	t.Logf("%d threads, %d frames agree with gdb", len(want), frames)
}

func sameGDB(a, b []gdbFrame) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestUnwindCommandGcore runs "gosym unwind" on a core written by gdb's
// gcore while coretest's program ran (GOSYM_GCORE=1, as .ci/run sets; the
// core takes about 1.2 GB): the threads running the spinning goroutines
// must show, as their physical frames, the PCs, SPs and functions the
// runtime printed for those goroutines when SIGQUIT killed the program
// just after.
func TestUnwindCommandGcore(t *testing.T) {
	if os.Getenv("GOSYM_GCORE") != "1" {
		t.Skip("set GOSYM_GCORE=1 to run (gcore writes about 1.2 GB; .ci/run does)")
	}
	cr, err := coretest.Gcore(t.TempDir(), "amd64")
	if errors.Is(err, coretest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if status := run([]string{"unwind", cr.Binary, cr.Core}, nil, &stdout, &stderr); status != 0 {
		t.Fatalf("status %d: %s", status, stderr.String())
	}
	// Each thread's physical frames, as the runtime prints them.
	var threads [][]oracle.TracebackFrame
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(line, "thread ") {
			threads = append(threads, nil)
			continue
		}
		f := strings.Split(strings.TrimPrefix(line, "\t"), "\t")
		if len(f) != 4 || len(threads) == 0 {
			continue
		}
		pc, err1 := strconv.ParseUint(strings.TrimPrefix(f[0], "0x"), 16, 64)
		sp, err2 := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad line %q", line)
		}
		th := &threads[len(threads)-1]
		*th = append(*th, oracle.TracebackFrame{Func: oracle.PrintName(f[2]), PC: pc, SP: sp})
	}
	found := 0
	for _, g := range coretest.Goroutines(cr.Output, "") {
		if !g.Signal || !strings.HasPrefix(g.Frames[0].Func, "main.spin") {
			continue
		}
		want := g.Frames
		for i := range want {
			want[i].FP = 0
		}
		ok := false
		for _, th := range threads {
			if slices.Equal(th, want) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s: no thread shows its frames:\n%v", g.Header, want)
			continue
		}
		found++
	}
	if found != 3 {
		t.Errorf("%d spinning goroutines found, want 3", found)
	}
}
