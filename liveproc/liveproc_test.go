//go:build linux

package liveproc

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/elfcore"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/oracle"
	"github.com/gosym-dev/gosym/object"
)

// buildProg builds testdata/liveprog into dir with the installed
// toolchain and the further go build flags.
func buildProg(t testing.TB, dir string, flags ...string) string {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		// Nothing else can be tested live here: qemu-user, which runs
		// the other architectures, does not support ptrace of its guest.
		t.Skipf("live tests run on linux/amd64 only, not %s", runtime.GOARCH)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	exe := filepath.Join(dir, "liveprog")
	cmd := exec.Command(goCmd, append(append([]string{"build"}, flags...), "-o", exe, "./testdata/liveprog")...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

// prog is a running liveprog.
type prog struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	marker uint64 // the address of its marker
	stack  string // runtime.Stack's output, once every goroutine waited
}

// start runs exe with park more parked goroutines, and the further
// arguments, until it is ready.
func start(t testing.TB, exe string, park int, args ...string) *prog {
	t.Helper()
	stackFile := filepath.Join(filepath.Dir(exe), "stack.txt")
	cmd := exec.Command(exe, append([]string{"-stack", stackFile, "-park", strconv.Itoa(park)}, args...)...)
	// The spinners hold two Ps for good: the rest need others.
	cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1", "GOMAXPROCS=4")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &prog{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(out)}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	line, readErr := p.stdout.ReadString('\n')
	if _, err := fmt.Sscanf(line, "ready %v\n", &p.marker); err != nil {
		t.Fatalf("the program did not get ready: %q %v %v", line, readErr, err)
	}
	data, err := os.ReadFile(stackFile)
	if err != nil {
		t.Fatal(err)
	}
	p.stack = string(data)
	return p
}

// quit tells the program to exit, and checks that it does, cleanly: it
// runs after Detach.
func (p *prog) quit(t testing.TB) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, "quit\n"); err != nil {
		t.Fatal(err)
	}
	if line, _ := p.stdout.ReadString('\n'); line != "bye 108\n" {
		t.Errorf("the program said %q after quit, want \"bye 108\"", line)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("the program: %v", err)
	}
}

// attach attaches to pid; where ptrace is not permitted it skips the test,
// unless it runs as root: there it must work.
func attach(t testing.TB, pid int) *Process {
	t.Helper()
	p, err := Attach(pid)
	if errors.Is(err, os.ErrPermission) && os.Geteuid() != 0 {
		scope, _ := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
		t.Skipf("ptrace is not permitted here (not root; yama ptrace_scope %q): %v", bytes.TrimSpace(scope), err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// stackGoroutine is a goroutine of runtime.Stack's output: its physical
// frames (function names, and file:line).
type stackGoroutine struct {
	header string
	funcs  []string
	lines  []string
}

// parseStack returns the goroutines of runtime.Stack's output.
func parseStack(s string) []stackGoroutine {
	var gs []stackGoroutine
	for _, block := range strings.Split(strings.TrimSpace(s), "\n\n") {
		lines := strings.Split(block, "\n")
		g := stackGoroutine{header: lines[0]}
		for i := 1; i+1 < len(lines); i += 2 {
			fn, pos := lines[i], strings.TrimPrefix(lines[i+1], "\t")
			if strings.HasPrefix(fn, "created by ") {
				break
			}
			pos, _, physical := strings.Cut(pos, " +0x")
			if !physical {
				continue // inlined
			}
			g.funcs = append(g.funcs, fn[:strings.LastIndexByte(fn, '(')])
			g.lines = append(g.lines, pos)
		}
		gs = append(gs, g)
	}
	return gs
}

// threadStack is one thread's physical frames, unwound from its registers.
type threadStack struct {
	funcs []string // PrintName of each function, runtime.goexit left out
	lines []string // file:line of each frame's own function
	err   error
}

func unwindThread(tab *gosym.Table, rel elfcore.Relocation, mem io.ReaderAt, th elfcore.Thread) threadStack {
	var ts threadStack
	regs := gosym.Regs{PC: rel.ToLink(th.PC), SP: th.SP, LR: rel.ToLink(th.LR)}
	var locs []gosym.Location
	for fr, err := range tab.Unwind(regs, mem) {
		if err != nil {
			ts.err = err
			break
		}
		name := oracle.PrintName(fr.Func.Name())
		if name == "runtime.goexit" {
			break
		}
		ts.funcs = append(ts.funcs, name)
		locs, _ = fr.Func.ResolveLocations(fr.LookupPC(), locs)
		pos := "?"
		if n := len(locs); n > 0 {
			pos = fmt.Sprintf("%s:%d", locs[n-1].File, locs[n-1].Line)
		}
		ts.lines = append(ts.lines, pos)
	}
	return ts
}

// spinners are the innermost functions of the spinning goroutines.
var spinners = []string{"main.spinA", "main.spinBLoop"}

// TestAttach attaches to testdata/liveprog, built as a fixed and as a
// position-independent executable, once its goroutines wait in known
// states and two spin on threads of their own, and checks:
//
//   - the marker the program prints the address of reads, through
//     /proc/PID/mem, as the program wrote it;
//   - the image's build ID is the binary's, and its relocation the one
//     the mappings show (bias 0 for the fixed build);
//   - every thread unwinds from its registers (Table.Unwind through the
//     relocation's view) without error, but for a thread in the vDSO;
//     the threads of the spinning goroutines show the physical frames
//     runtime.Stack printed for them (function, and file:line but for the
//     innermost, which is anywhere in the loop); every other thread is in
//     the runtime (futex, epoll, nanosleep) or in a system call;
//   - after Detach the program goes on, and exits cleanly when told.
func TestAttach(t *testing.T) {
	for _, mode := range []string{"exe", "pie"} {
		t.Run(mode, func(t *testing.T) {
			exe := buildProg(t, t.TempDir(), "-buildmode="+mode)
			pr := start(t, exe, 0)
			want := map[string]stackGoroutine{}
			for _, g := range parseStack(pr.stack) {
				for _, s := range spinners {
					if slices.Contains(g.funcs, s) {
						want[s] = g
					}
				}
			}
			if len(want) != len(spinners) {
				t.Fatalf("runtime.Stack shows %d spinning goroutines:\n%s", len(want), pr.stack)
			}
			tab, err := gosym.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer tab.Close()
			checkAttach(t, exe, tab, pr, want)
			pr.quit(t)
		})
	}
}

// checkAttach makes the attach of TestAttach.
func checkAttach(t *testing.T, exe string, tab *gosym.Table, pr *prog, want map[string]stackGoroutine) {
	p := attach(t, pr.cmd.Process.Pid)
	detached := false
	defer func() {
		if !detached {
			p.Detach()
		}
	}()
	if len(p.Threads) < 4 {
		t.Errorf("%d threads", len(p.Threads))
	}
	buf := make([]byte, 16)
	if _, err := p.ReadAt(buf, int64(pr.marker)); err != nil || string(buf[:15]) != "liveproc marker" {
		t.Errorf("marker at %#x: %q, %v", pr.marker, buf, err)
	}

	mappings, err := p.Mappings()
	if err != nil {
		t.Fatal(err)
	}
	im, err := p.Image()
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	rel, err := im.Relocation(ef)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := object.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	_, goID, _ := object.BuildIDs(obj)
	if im.GoBuildID != goID || im.Path != exe {
		t.Errorf("image %+v: want the Go build ID %q and the path %s", im, goID, exe)
	}
	// The executable's first mapping starts at its first PT_LOAD, moved.
	if i := slices.IndexFunc(mappings, func(m elfcore.Mapping) bool { return m.Path == exe }); i < 0 || mappings[i].Start != rel.Start+rel.Bias || mappings[i].Offset != 0 {
		t.Errorf("relocation %+v, mappings %+v", rel, mappings)
	}
	if (ef.Type == elf.ET_DYN) != (rel.Bias != 0) {
		t.Errorf("%v executable, bias %#x", ef.Type, rel.Bias)
	}

	mem := rel.View(p, 8, ef.ByteOrder)
	inVDSO := func(pc uint64) bool {
		i := slices.IndexFunc(mappings, func(m elfcore.Mapping) bool { return m.Start <= pc && pc < m.End })
		return i >= 0 && mappings[i].Path == "[vdso]"
	}
	want = maps.Clone(want)
	for _, th := range p.Threads {
		if th.Signal != 0 {
			t.Logf("thread %d: stopped by signal %d on its way", th.PID, th.Signal)
		}
		ts := unwindThread(tab, rel, mem, th)
		if ts.err != nil {
			if len(ts.funcs) == 0 && inVDSO(th.PC) {
				t.Logf("thread %d is in the vDSO: %v", th.PID, ts.err)
				continue
			}
			t.Errorf("thread %d: %v\n%v", th.PID, ts.err, ts.funcs)
			continue
		}
		if len(ts.funcs) == 0 {
			t.Errorf("thread %d: no frame", th.PID)
			continue
		}
		if g, ok := want[ts.funcs[0]]; ok {
			// runtime.Stack caught the spinner where it yielded:
			// its frames from the spinning function outwards.
			i := slices.Index(g.funcs, ts.funcs[0])
			if !slices.Equal(ts.funcs, g.funcs[i:]) || !slices.Equal(ts.lines[1:], g.lines[i+1:]) {
				t.Errorf("thread %d, in %s:\nUnwind:\n%v\n%v\nruntime.Stack:\n%v\n%v", th.PID, ts.funcs[0], ts.funcs, ts.lines, g.funcs, g.lines)
			}
			delete(want, ts.funcs[0])
			continue
		}
		if in := ts.funcs[0]; !strings.HasPrefix(in, "runtime.") && !strings.HasPrefix(in, "internal/runtime/") && !strings.HasPrefix(in, "syscall.") {
			t.Errorf("thread %d is neither in a spinner's loop, nor in the runtime, nor in a system call: %v", th.PID, ts.funcs)
		}
	}
	stopped, err := p.Detach()
	detached = true
	if err != nil {
		t.Error(err)
	}
	t.Logf("%d threads, stopped for %v", len(p.Threads), stopped)
	if _, err := p.ReadAt(buf, int64(pr.marker)); !errors.Is(err, os.ErrClosed) {
		t.Errorf("ReadAt after Detach: %v", err)
	}
	for f := range want {
		t.Errorf("no thread is in %s's loop", f)
	}
}

// TestAttachErrors checks the errors of Attach and Detach: a process ID
// that is not one, a process that does not exist, the caller's own
// process (ptrace cannot trace its own threads), and a second Detach.
func TestAttachErrors(t *testing.T) {
	for _, pid := range []int{0, -1} {
		if _, err := Attach(pid); err == nil || !strings.Contains(err.Error(), "not a process ID") {
			t.Errorf("Attach(%d): %v", pid, err)
		}
	}
	// A process ID above the kernel's limit (pid_max is at most 2^22).
	if _, err := Attach(1 << 23); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Attach of no process: %v", err)
	}
	if _, err := Attach(os.Getpid()); !errors.Is(err, os.ErrPermission) {
		t.Errorf("Attach of the caller's own process: %v", err)
	}

	if runtime.GOARCH != "amd64" {
		t.Skipf("live tests run on linux/amd64 only, not %s", runtime.GOARCH)
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	p := attach(t, cmd.Process.Pid)
	if len(p.Threads) != 1 || p.Threads[0].PID != cmd.Process.Pid || p.Threads[0].PC == 0 || p.Threads[0].SP == 0 {
		t.Errorf("threads %+v", p.Threads)
	}
	if _, err := p.Detach(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Detach(); err == nil {
		t.Error("a second Detach: no error")
	}
}

func TestParseMaps(t *testing.T) {
	maps, err := parseMaps([]byte(`00400000-0049f000 r-xp 00000000 08:01 1234    /tmp/a b/prog
7ffd1000-7ffd2000 rw-p 00000000 00:00 0                          [stack]
7f0000000000-7f0000001000 ---p 00001000 00:00 0 
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []elfcore.Mapping{
		{Start: 0x400000, End: 0x49f000, Flags: elf.PF_R | elf.PF_X, Path: "/tmp/a b/prog"},
		{Start: 0x7ffd1000, End: 0x7ffd2000, Flags: elf.PF_R | elf.PF_W, Path: "[stack]"},
		{Start: 0x7f0000000000, End: 0x7f0000001000, Offset: 0x1000},
		{Start: 0xffffffffff600000, End: 0xffffffffff601000, Flags: elf.PF_X, Path: "[vsyscall]"},
	}
	if !slices.Equal(maps, want) {
		t.Errorf("parseMaps:\n%+v\nwant\n%+v", maps, want)
	}
	for _, bad := range []string{
		"00400000 r-xp 00000000 08:01 1234 /prog\n",
		"00500000-00400000 r-xp 00000000 08:01 1234 /prog\n",
		"00400000-00500000 r-xp zz 08:01 1234 /prog\n",
		"00400000-00500000 r 0 08:01 1234 /prog\n",
		"00400000-00500000 r-xp 0 08:01\n",
	} {
		if m, err := parseMaps([]byte(bad)); err == nil {
			t.Errorf("parseMaps(%q) = %+v, no error", bad, m)
		}
	}
}

// FuzzParseMaps feeds parseMaps damaged /proc/PID/maps text: it returns
// an error or mappings that do not run backwards, no more than lines.
func FuzzParseMaps(f *testing.F) {
	fuzzseed.Add(f, []byte("00400000-0049f000 r-xp 00000000 08:01 1234    /tmp/a b/prog\n7ffd1000-7ffd2000 rw-p 00000000 00:00 0 [stack]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		maps, err := parseMaps(data)
		if err != nil {
			return
		}
		if len(maps) > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d mappings from %d lines", len(maps), bytes.Count(data, []byte("\n"))+1)
		}
		for _, m := range maps {
			if m.End < m.Start {
				t.Fatalf("mapping %+v", m)
			}
		}
	})
}

// BenchmarkAttach measures how long Attach, reading every thread's
// registers, and Detach stop a process of 10,000 goroutines (parked on a
// channel), and reports it as stopped-ms/op: the stop is dominated by
// the threads (each seized, interrupted and waited for), not by the
// goroutines, which are not looked at.
func BenchmarkAttach(b *testing.B) {
	exe := buildProg(b, b.TempDir())
	pr := start(b, exe, 10000)
	var stopped time.Duration
	threads := 0
	for b.Loop() {
		p := attach(b, pr.cmd.Process.Pid)
		threads = len(p.Threads)
		d, err := p.Detach()
		if err != nil {
			b.Fatal(err)
		}
		stopped += d
	}
	b.ReportMetric(float64(stopped.Microseconds())/1000/float64(b.N), "stopped-ms/op")
	b.ReportMetric(float64(threads), "threads")
	pr.quit(b)
}

// TestAttachChurn attaches to liveprog while it starts and ends threads
// without pause: once Attach returns, every task of the process must be
// one of its Threads and in a ptrace stop ("t" in /proc/PID/task/TID/stat),
// each time.
func TestAttachChurn(t *testing.T) {
	exe := buildProg(t, t.TempDir())
	pr := start(t, exe, 0, "-churn")
	pid := pr.cmd.Process.Pid
	for range 5 {
		p := attach(t, pid)
		tasks, err := listTasks(pid)
		if err != nil {
			t.Fatal(err)
		}
		for _, tid := range tasks {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
			if err != nil {
				t.Error(err)
				continue
			}
			// pid (comm) state ...: comm may hold spaces.
			state := string(bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])[0])
			known := slices.ContainsFunc(p.Threads, func(th elfcore.Thread) bool { return th.PID == tid })
			if state != "t" || !known {
				t.Errorf("thread %d: state %q; among the %d threads Attach stopped: %v", tid, state, len(p.Threads), known)
			}
		}
		stopped, err := p.Detach()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d threads, stopped for %v", len(p.Threads), stopped)
	}
	pr.quit(t)
}
