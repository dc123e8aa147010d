package goroutines_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/elfcore"
	"github.com/gosym-dev/gosym/goroutines"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/coretest"
	"github.com/gosym-dev/gosym/internal/objtest"
)

// cgoTarget is an architecture the cgo oracle runs: its C cross
// compiler, and the qemu-user that runs it ("" for the host's own) with
// the directory of its C library.
type cgoTarget struct {
	goarch, cc, qemu, sysroot string
	// goroot is the toolchain of another release ("" for the installed
	// one), which builds in GOPATH mode.
	goroot string
}

var (
	cgoAMD64 = cgoTarget{goarch: "amd64", cc: "gcc"}
	cgoARM64 = cgoTarget{goarch: "arm64", cc: "aarch64-linux-gnu-gcc", qemu: "qemu-aarch64", sysroot: "/usr/aarch64-linux-gnu"}
)

// cgoBuild builds testdata/cgoprog (linux, CGO_ENABLED=1) for tg into
// dir with the installed toolchain, stripped (-s -w) and its unstripped
// twin. It skips where the program cannot be built or run here.
func cgoBuild(t *testing.T, dir string, tg cgoTarget) (exe, twin string) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the cgo oracle runs on linux/amd64 hosts")
	}
	if _, err := exec.LookPath(tg.cc); err != nil {
		t.Skipf("no %s: the cgo program cannot be built for %s (apt-get install %s)", tg.cc, tg.goarch,
			map[string]string{"amd64": "gcc", "arm64": "gcc-aarch64-linux-gnu"}[tg.goarch])
	}
	if tg.qemu != "" {
		if _, err := exec.LookPath(tg.qemu); err != nil {
			t.Skipf("no %s (apt-get install qemu-user)", tg.qemu)
		}
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "cgoprog"))
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOOS=linux", "GOARCH="+tg.goarch, "CGO_ENABLED=1", "CC="+tg.cc, "GOFLAGS=", "GOTOOLCHAIN=local")
	if tg.goroot != "" {
		// A GOPATH holding the program: old releases know no modules.
		gopath := filepath.Join(dir, "gopath")
		pkg := filepath.Join(gopath, "src", "cgoprog")
		data, err := os.ReadFile(filepath.Join(src, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "main.go"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		goCmd, src = filepath.Join(tg.goroot, "bin", "go"), pkg
		env = append(env, "GOROOT="+tg.goroot, "GOPATH="+gopath, "GO111MODULE=off", "GOENV=off",
			"GOCACHE="+filepath.Join(os.TempDir(), "gosym-coretest-cache"))
	}
	build := func(name, ldflags string) string {
		exe := filepath.Join(dir, name)
		cmd := exec.Command(goCmd, "build", "-ldflags="+ldflags, "-o", exe, ".")
		cmd.Dir, cmd.Env = src, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		return exe
	}
	return build("cgoprog", "-s -w"), build("cgoprog.unstripped", "")
}

// crashCgo builds testdata/cgoprog for tg and runs the stripped binary
// (natively, or under qemu-user) until it dies under GOTRACEBACK=crash:
// of its nil dereference, or with quit, of the SIGQUIT it sends itself
// (every thread then prints the goroutine it runs, the spinning
// callback's and the ones in C included), leaving a core file.
func crashCgo(t *testing.T, tg cgoTarget, quit bool) *coretest.Run {
	t.Helper()
	if pat, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); tg.qemu == "" && bytes.HasPrefix(pat, []byte("|")) {
		t.Skip("the kernel pipes cores to a program (core_pattern)")
	}
	dir := t.TempDir()
	exe, twin := cgoBuild(t, dir, tg)
	args := []string{"-c", `ulimit -c unlimited && exec "$@"`, "bash"}
	if tg.qemu != "" {
		args = append(args, tg.qemu, "-L", tg.sysroot)
	}
	args = append(args, exe)
	want := "nil pointer dereference"
	if quit {
		args, want = append(args, "quit"), "SIGQUIT: quit"
	}
	cmd := exec.Command("bash", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTRACEBACK=crash", "GODEBUG=asyncpreemptoff=1", "GOMAXPROCS=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	if err == nil || !strings.Contains(out.String(), want) {
		t.Fatalf("the program did not die of %q (%v):\n%s", want, err, out.String())
	}
	// qemu-user writes the guest's core as qemu_<prog>_<date>-<pid>.core
	// (and the kernel may dump qemu itself as "core": not ours, and
	// hundreds of MB).
	pattern := "core*"
	if tg.qemu != "" {
		pattern = "qemu_*.core"
		if host, _ := filepath.Glob(filepath.Join(dir, "core*")); len(host) > 0 {
			for _, h := range host {
				os.Remove(h)
			}
		}
	}
	cores, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(cores) != 1 {
		t.Skipf("no core file written in %s (core_pattern, ulimit -c)", dir)
	}
	return &coretest.Run{Binary: exe, Unstripped: twin, Output: out.String(), Core: cores[0]}
}

// cgoKinds are the goroutines of cgoprog that cross a cgo boundary, by
// frames the runtime prints for them: each must be printed by the
// runtime with frames (so that the oracle covers it), and agree with
// ours.
var cgoKinds = []struct {
	name  string
	funcs []string // functions that must be among its printed frames, in this order
}{
	{"blocked in C", []string{"runtime.cgocall", "main._Cfunc_blockInC", "main.inC"}},
	{"Go called back from C, parked", []string{"runtime.chanrecv1", "runtime.cgocallback", "runtime.cgocall", "main._Cfunc_callParked", "main.callback"}},
	{"Go → C → Go → C, blocked in C", []string{"runtime.cgocall", "main._Cfunc_blockInC", "runtime.cgocallback", "runtime.cgocall", "main._Cfunc_callNested", "main.nested"}},
	{"a thread of C calling Go, parked", []string{"runtime.chansend1", "runtime.cgocallback", "runtime.goexit"}},
}

// cgoSpinning is the goroutine spinning in Go code called back from C,
// which the runtime prints with frames only when its thread takes a
// signal (quit).
var cgoSpinning = []string{"runtime.cgocallback", "runtime.cgocall", "main._Cfunc_callSpin", "main.spinning"}

// printedWith returns the id of a goroutine the runtime printed whose
// frames have funcs in order (runtime.cgocallback matches
// runtime.cgocallback_gofunc, its name before Go 1.16).
func printedWith(want map[uint64]*printed, funcs []string) (uint64, bool) {
	for id, w := range want {
		i := 0
		for _, f := range w.frames {
			if i < len(funcs) && (f.Func == funcs[i] || funcs[i] == "runtime.cgocallback" && f.Func == "runtime.cgocallback_gofunc") {
				i++
			}
		}
		if i == len(funcs) {
			return id, true
		}
	}
	return 0, false
}

// printedIDs returns the ids of every goroutine the runtime printed a
// header for, with frames or not ("goroutine running on other thread;
// stack unavailable").
func printedIDs(output string) map[uint64]bool {
	ids := map[uint64]bool{}
	for _, line := range strings.Split(output, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "goroutine" && strings.HasSuffix(line, ":") {
			if id, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				ids[id] = true
			}
		}
	}
	return ids
}

// foreignRestorer reports whether the walk of thread tid's registers
// stops at a signal frame whose restorer is not the runtime's: in a cgo
// binary the C library installs the signal handlers, and its restorer
// (glibc's __restore_rt) is where the kernel's frame returns to, which
// the crossing of gosym/unwind_signal.go does not accept yet.
func foreignRestorer(tab *gosym.Table, core *elfcore.File, tid int) (string, bool) {
	for _, th := range core.Threads {
		if th.PID != tid {
			continue
		}
		for _, err := range tab.Unwind(gosym.Regs{PC: th.PC, SP: th.SP, LR: th.LR}, core) {
			if err != nil && strings.Contains(err.Error(), "a foreign signal restorer") {
				return err.Error(), true
			}
		}
	}
	return "", false
}

// cgoAgreement counts what checkCgo found for one binary.
type cgoAgreement struct {
	printed, agree, physical int
	// restorer counts the running goroutines whose thread is in a
	// signal handler entered through the C library's restorer
	// (foreignRestorer): no stack, an error, never a wrong frame.
	restorer int
}

// checkCgo runs the oracle on a core of cgoprog, from binary (the
// stripped program or its twin): every goroutine the runtime printed
// with frames is listed with the same status, every physical frame
// (function, file:line, pc=, sp=) and creator; every goroutine listed
// was printed (a dead one, such as the extra M's goroutine between calls
// from C, is not listed). A running goroutine's printed frames may be
// the outer ones of ours (the crashing one, whose thread went on into
// the crash code). With gcore (a core gdb's gcore wrote before the
// runtime printed its traceback), a running goroutine's innermost frame
// may be at another PC of the same function at the same SP (a spinning
// loop). The one exception: a running goroutine whose thread is in a
// signal handler entered through the C library's restorer gets an error
// (counted in restorer).
func checkCgo(t *testing.T, binary string, run *coretest.Run, gcore bool) cgoAgreement {
	t.Helper()
	tab, core, p := openProcess(t, binary, run.Core)
	want, headers := parsePrinted(run.Output), printedIDs(run.Output)
	a := cgoAgreement{printed: len(want)}
	listed := map[uint64]bool{}
	for g, err := range p.All() {
		if err != nil {
			t.Errorf("a damaged entry in a sound core: %v", err)
			continue
		}
		listed[g.ID] = true
		if !headers[g.ID] {
			t.Errorf("goroutine %d [%s] listed, not printed by the runtime", g.ID, g.StatusString)
		}
		w, ok := want[g.ID]
		if !ok {
			t.Logf("goroutine %d [%s] printed without frames (running on another thread)", g.ID, g.StatusString)
			continue
		}
		ok = true
		if g.StatusString != w.status {
			t.Errorf("goroutine %d: status %q, the runtime printed %q", g.ID, g.StatusString, w.status)
			ok = false
		}
		if cb, at := createdBy(tab, g); cb != w.createdBy || at != w.createdAt {
			t.Errorf("goroutine %d: created by %q at %q, the runtime printed %q at %q", g.ID, cb, at, w.createdBy, w.createdAt)
			ok = false
		}
		got, err := ours(p, g, false)
		if err != nil && g.Status == goroutines.Running && len(got) == 0 {
			if msg, limit := foreignRestorer(tab, core, g.Thread); limit {
				t.Logf("goroutine %d [running]: %v; its thread's walk: %s", g.ID, err, msg)
				a.restorer++
				continue
			}
		}
		if err != nil {
			t.Errorf("goroutine %d: %v", g.ID, err)
			ok = false
		}
		n := len(w.frames)
		switch {
		case sameFrames(got, w.frames):
		case g.Status == goroutines.Running && len(got) > n && sameFrames(asPanic(got[len(got)-n:], w.frames), w.frames):
		case gcore && g.Status == goroutines.Running && len(got) == n && n > 0 && got[0].Func == w.frames[0].Func && got[0].SP == w.frames[0].SP && sameFrames(got[1:], w.frames[1:]):
			// gcore caught the thread in the loop the runtime's
			// traceback, taken later, printed: at another of its
			// instructions, maybe.
		default:
			t.Errorf("goroutine %d [%s] (thread %d):\nours:\n%s\nruntime:\n%s", g.ID, g.StatusString, g.Thread, formatFrames(got), formatFrames(w.frames))
			ok = false
		}
		if ok {
			a.agree++
			a.physical += n
		}
	}
	for id, w := range want {
		if !listed[id] {
			t.Errorf("goroutine %d [%s] printed by the runtime, not listed", id, w.status)
		}
	}
	t.Logf("%s: %d goroutines printed with frames by the runtime, %d agree (status, creator and %d physical frames), %d running on a thread in a signal handler entered through the C library's restorer",
		filepath.Base(binary), a.printed, a.agree, a.physical, a.restorer)
	if a.agree+a.restorer != a.printed {
		t.Errorf("%s: %d of %d goroutines agree", filepath.Base(binary), a.agree, a.printed)
	}
	return a
}

// checkKinds checks that the runtime printed each kind of cgo goroutine
// with frames.
func checkKinds(t *testing.T, run *coretest.Run, spinning bool) {
	t.Helper()
	want := parsePrinted(run.Output)
	kinds := cgoKinds
	if spinning {
		kinds = append(kinds[:len(kinds):len(kinds)], struct {
			name  string
			funcs []string
		}{"Go called back from C, spinning", cgoSpinning})
	}
	for _, k := range kinds {
		id, ok := printedWith(want, k.funcs)
		if !ok {
			t.Errorf("no goroutine %s (frames %v) printed by the runtime:\n%s", k.name, k.funcs, run.Output)
			continue
		}
		t.Logf("goroutine %d: %s", id, k.name)
	}
}

// checkCThreads checks the threads of the goroutines blocked in C (in
// cgoprog's nil dereference core, which no signal interrupted): unwound
// from their registers, each gives no frame and an error saying the
// thread runs code the symbol table does not describe (C code), while
// the goroutine's own frames come from g.syscallsp (checkCgo). It
// returns how many it checked.
func checkCThreads(t *testing.T, binary, corePath string) int {
	t.Helper()
	tab, core, p := openProcess(t, binary, corePath)
	n := 0
	for g, err := range p.All() {
		if err != nil || g.Status != goroutines.Syscall || g.Thread == 0 {
			continue
		}
		for _, th := range core.Threads {
			if th.PID != g.Thread {
				continue
			}
			if _, err := tab.ResolveFunction(th.PC); err == nil {
				continue // not in C when the core was written
			}
			n++
			frames := 0
			var last error
			for _, err := range tab.Unwind(gosym.Regs{PC: th.PC, SP: th.SP}, core) {
				if err != nil {
					last = err
				} else {
					frames++
				}
			}
			if frames != 0 || last == nil || !strings.Contains(last.Error(), "(C code, or another binary's)") {
				t.Errorf("thread %d of goroutine %d, in C at %#x: %d frames, error %v; want no frame and an error saying it runs C code", th.PID, g.ID, th.PC, frames, last)
			} else {
				t.Logf("thread %d of goroutine %d [%s]: %v", th.PID, g.ID, g.StatusString, last)
			}
		}
	}
	return n
}

// TestCgoOracle is the runtime oracle on a cgo program
// (testdata/cgoprog, linux/amd64) that dies of a nil dereference:
// goroutines blocked in C (from g.syscallsp, the goroutine's side of
// asmcgocall), called back from C and parked (through
// runtime.cgocallback back to the Go code that called C), Go → C → Go →
// C, and on a thread C created (an extra M) agree with the runtime's
// traceback, frame by frame, from the stripped binary and its twin. The
// threads in C code unwind to a clear error, never to a frame.
func TestCgoOracle(t *testing.T) {
	run := crashCgo(t, cgoAMD64, false)
	checkKinds(t, run, false)
	for _, bin := range []string{run.Binary, run.Unstripped} {
		checkCgo(t, bin, run, false)
	}
	if n := checkCThreads(t, run.Binary, run.Core); n < 2 {
		t.Errorf("%d threads of goroutines blocked in C were in C code, want 2 (inC, nested)", n)
	}
}

// TestCgoOracleQuit is TestCgoOracle for the program killed by SIGQUIT:
// every thread prints the goroutine it runs, so the runtime also prints
// the goroutine spinning in Go code called back from C, and the ones
// whose threads are in C (a heavy oracle: GOSYM_HEAVY=1).
func TestCgoOracleQuit(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	run := crashCgo(t, cgoAMD64, true)
	checkKinds(t, run, true)
	for _, bin := range []string{run.Binary, run.Unstripped} {
		checkCgo(t, bin, run, false)
	}
}

// TestCgoOracleARM64 is TestCgoOracle and TestCgoOracleQuit for
// linux/arm64, under qemu-user, built with the C cross compiler
// aarch64-linux-gnu-gcc (a heavy oracle: GOSYM_HEAVY=1). There the
// signal frame is crossed whatever its restorer: the crashing goroutine
// agrees too.
func TestCgoOracleARM64(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	for _, quit := range []bool{false, true} {
		t.Run(map[bool]string{false: "nil", true: "quit"}[quit], func(t *testing.T) {
			run := crashCgo(t, cgoARM64, quit)
			checkKinds(t, run, quit)
			for _, bin := range []string{run.Binary, run.Unstripped} {
				if a := checkCgo(t, bin, run, false); a.restorer != 0 {
					t.Errorf("%s: %d goroutines without a stack: arm64's signal frames are crossed", filepath.Base(bin), a.restorer)
				}
			}
		})
	}
}

// TestCgoOracleReleases is TestCgoOracle with the toolchains of other
// releases (oracleReleases; a heavy oracle: GOSYM_HEAVY=1).
func TestCgoOracleReleases(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	for _, v := range oracleReleases {
		t.Run(v, func(t *testing.T) {
			goroot, err := coretest.Toolchain(v)
			if err != nil {
				t.Skip(err)
			}
			tg := cgoAMD64
			tg.goroot = goroot
			run := crashCgo(t, tg, false)
			checkKinds(t, run, false)
			for _, bin := range []string{run.Binary, run.Unstripped} {
				checkCgo(t, bin, run, false)
			}
		})
	}
}

// TestRunningInC: a goroutine running on a thread whose PC is outside the
// binary's functions (C code: a thread the core caught in a C call the
// runtime made without leaving the goroutine's status, such as mmap
// through the C library in a cgo binary) has no stack: one error, which
// says the thread's stack does not reach it and why (the walk's own
// error: code the symbol table does not describe), and no frame (its
// g.sched may be stale).
func TestRunningInC(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the made-up stacks are laid out for amd64")
	}
	f := openSelf(t)
	img := manyImage(t, f, 1)
	bss, heap := img[0], img[1]
	l := f.lay
	g := binary.LittleEndian.Uint64(heap.data[0:]) // the only g
	gb := heap.data[g-heap.base:]
	binary.LittleEndian.PutUint32(gb[l.GAtomicStatus:], uint32(goroutines.Running))
	m := f.bss + 0x2000
	put(gb, l.GM, m)
	put(bss.data[m-f.bss:], l.MProcid, 4242)
	const cPC uint64 = 0x7f0000001234 // no function of the binary's
	p, err := goroutines.New(f.tab, img, []elfcore.Thread{{PID: 4242, PC: cPC, SP: f.bss + 0x3000}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for g, err := range p.All() {
		if err != nil {
			t.Fatal(err)
		}
		n++
		var frames int
		var errs []error
		for _, err := range p.Frames(g) {
			if err != nil {
				errs = append(errs, err)
			} else {
				frames++
			}
		}
		if frames != 0 || len(errs) != 1 {
			t.Fatalf("%d frames, errors %v; want no frame and one error", frames, errs)
		}
		msg := errs[0].Error()
		for _, want := range []string{"thread 4242 runs goroutine 1, but its stack does not reach it (no frame)", "(C code, or another binary's)", "pc in no function"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not say %q", msg, want)
			}
		}
		var ue *gosym.UnwindError
		if !errors.As(errs[0], &ue) || ue.PC != cPC {
			t.Errorf("error %v: not an *UnwindError at the thread's pc %#x", errs[0], cPC)
		}
	}
	if n != 1 {
		t.Fatalf("%d goroutines, want 1", n)
	}
}

// gcoreCgo builds testdata/cgoprog for linux/amd64, runs it until it is
// ready (every goroutine in its state, the callback spinning), dumps it
// with gdb's gcore (every thread stopped where it runs: in C, in Go code,
// in the runtime; none in a signal handler), then kills it with SIGQUIT
// under GOTRACEBACK=crash for the runtime's traceback. gcore writes every
// mapping.
func gcoreCgo(t *testing.T) *coretest.Run {
	t.Helper()
	gcore, err := exec.LookPath("gcore")
	if err != nil {
		t.Skip("no gcore (apt-get install gdb)")
	}
	dir := t.TempDir()
	exe, twin := cgoBuild(t, dir, cgoAMD64)
	cmd := exec.Command(exe, "ready")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTRACEBACK=crash", "GODEBUG=asyncpreemptoff=1", "GOMAXPROCS=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	line := make([]byte, 6)
	if _, err := io.ReadFull(stdout, line); err != nil || string(line) != "ready\n" {
		t.Fatalf("the program did not get ready (%v): %s", err, stderr.String())
	}
	prefix := filepath.Join(dir, "gcore")
	if out, err := exec.Command(gcore, "-o", prefix, strconv.Itoa(cmd.Process.Pid)).CombinedOutput(); err != nil {
		t.Fatalf("gcore: %v\n%s", err, out)
	}
	if err := cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, stdout)
	cmd.Wait()
	if !strings.Contains(stderr.String(), "SIGQUIT: quit") {
		t.Fatalf("the program did not die of SIGQUIT:\n%s", stderr.String())
	}
	core := fmt.Sprintf("%s.%d", prefix, cmd.Process.Pid)
	if fi, err := os.Stat(core); err == nil {
		t.Logf("gcore wrote %d MB", fi.Size()>>20)
	}
	return &coretest.Run{Binary: exe, Unstripped: twin, Output: stderr.String(), Core: core}
}

// TestCgoGcore is the cgo oracle on a core gdb's gcore wrote of the
// running program, which the runtime's traceback (SIGQUIT, after the
// dump) checks: no thread is in a signal handler, so on amd64 too the
// goroutine spinning in Go code called back from C is unwound from its
// thread's registers, through runtime.cgocallback to the Go code that
// called C, and must agree; the goroutines blocked in C come from
// g.syscallsp while their threads are in C (a heavy oracle:
// GOSYM_HEAVY=1).
func TestCgoGcore(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	run := gcoreCgo(t)
	checkKinds(t, run, true)
	for _, bin := range []string{run.Binary, run.Unstripped} {
		if a := checkCgo(t, bin, run, true); a.restorer != 0 {
			t.Errorf("%s: %d goroutines without a stack in a gcore core, where no thread is in a signal handler", filepath.Base(bin), a.restorer)
		}
	}
	if n := checkCThreads(t, run.Binary, run.Core); n < 2 {
		t.Errorf("%d threads of goroutines blocked in C were in C code, want 2 (inC, nested)", n)
	}
}

// stackSwitches are the cases of TestStackSwitchGcore: cgoprog's mode,
// the runtime function, run on the g0 stack while the goroutine runs,
// where gdb stops it, and the goroutine's physical frames that must follow
// (the first reached by the stack switch).
var stackSwitches = []struct {
	mode, stop string
	want       func(names []string) bool
	wantDoc    string
}{
	{"systemstack", "runtime.readmemstats_m", func(n []string) bool {
		return slices.Equal(n, []string{"runtime.systemstack_switch", "runtime.ReadMemStats", "main.memstats", "main.main", "runtime.main", "runtime.goexit"})
	}, "systemstack_switch, ReadMemStats, main.memstats, main.main, runtime.main, goexit"},
	{"mcall", "runtime.gosched_m", func(n []string) bool {
		// runtime.Gosched is inlined in main.yield.
		return slices.Equal(n, []string{"main.yield", "main.main", "runtime.main", "runtime.goexit"})
	}, "main.yield (runtime.Gosched inlined), main.main, runtime.main, goexit"},
	{"morestack", "runtime.newstack", func(n []string) bool {
		// A goroutine of grow in deep, at a prologue: deep's
		// frames, the go statement's function, goexit.
		k := len(n)
		if k < 3 || n[k-1] != "runtime.goexit" || n[k-2] != "main.grow.func1" {
			return false
		}
		for _, f := range n[:k-2] {
			if f != "main.deep" {
				return false
			}
		}
		return true
	}, "main.deep (at its prologue) and its callers main.deep, main.grow.func1, goexit"},
}

// TestStackSwitchGcore: a goroutine running on a thread that is on its
// g0 stack, after systemstack, mcall or morestack, on a real core.
// cgoprog loops through the switch (ReadMemStats, Gosched, stack growth);
// gdb stops it at the entry of the function the switch runs on g0
// (readmemstats_m, gosched_m, newstack), while the goroutine is running,
// and writes the core with gcore. The goroutine's frames must come from
// its thread's walk on g0 and go on from its g.sched: the frames the
// source says (stackSwitches), the first one reached by a stack switch,
// every SP on the goroutine's stack; and Delve on the unstripped twin (a
// second opinion; skipped where Delve cannot be built) shows the same
// frames (function, PC, file:line) after the g0 ones. A heavy test
// (GOSYM_HEAVY=1): gcore writes every mapping.
func TestStackSwitchGcore(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		t.Skip("no gdb (apt-get install gdb)")
	}
	dir := t.TempDir()
	exe, twin := cgoBuild(t, dir, cgoAMD64)
	tab, err := gosym.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	for _, tc := range stackSwitches {
		t.Run(tc.mode, func(t *testing.T) {
			stop, err := tab.LookupFunction(tc.stop)
			if err != nil {
				t.Skipf("no %s: %v", tc.stop, err)
			}
			corePath := gdbCore(t, gdb, exe, tc.mode, stop.Entry())
			core := openCore(t, corePath)
			p, err := goroutines.New(tab, core, core.Threads)
			if err != nil {
				t.Fatal(err)
			}
			// Usually one thread is at the breakpoint; two that
			// reached it together (two goroutines growing their
			// stacks) are both checked.
			stopped := map[int]bool{}
			for _, th := range core.Threads {
				if th.PC == stop.Entry() {
					stopped[th.PID] = true
				}
			}
			if len(stopped) == 0 {
				t.Fatalf("no thread at %s's entry", tc.stop)
			}
			checked := map[uint64][]dlvFrame{} // goroutine ID → our frames
			var matched []uint64               // goroutines with the frames of tc
			var others []string                // the rest: frames checked by Delve only
			for g, err := range p.All() {
				if err != nil {
					t.Errorf("a damaged entry in a sound core: %v", err)
					continue
				}
				if !stopped[g.Thread] {
					continue
				}
				if g.Status != goroutines.Running {
					t.Fatalf("goroutine %d [%s] on the stopped thread: want running", g.ID, g.StatusString)
				}
				var names []string
				i := 0
				for fr, err := range p.Frames(g) {
					if err != nil {
						t.Fatalf("goroutine %d: %v (frames so far %v)", g.ID, err, names)
					}
					names = append(names, fr.Func.Name())
					if i == 0 && fr.Reached != gosym.ReachedStackSwitch || i > 0 && fr.Reached != gosym.ReachedCall {
						t.Errorf("frame %d (%s) reached by %v", i, fr.Func.Name(), fr.Reached)
					}
					if fr.SP < g.StackLo || fr.SP >= g.StackHi {
						t.Errorf("frame %d (%s): sp %#x off the goroutine's stack [%#x, %#x)", i, fr.Func.Name(), fr.SP, g.StackLo, g.StackHi)
					}
					i++
				}
				if tc.want(names) {
					matched = append(matched, g.ID)
				} else {
					others = append(others, fmt.Sprintf("goroutine %d: %v", g.ID, names))
				}
				ours, err := oursInlined(p, g)
				if err != nil {
					t.Fatal(err)
				}
				checked[g.ID] = ours
				t.Logf("goroutine %d [running] on thread %d at %s's entry:\n%s", g.ID, g.Thread, tc.stop, formatDlv(ours))
			}
			if len(checked) != len(stopped) {
				t.Fatalf("%d goroutines on the %d threads stopped at %s", len(checked), len(stopped), tc.stop)
			}
			// Another goroutine may reach the breakpoint with the one
			// the mode drives (one leaving through goexit1 also
			// grows its stack): it must walk cleanly and agree with
			// Delve, but its frames are not the mode's.
			if len(matched) == 0 {
				t.Errorf("no goroutine at %s has the frames %s: %v", tc.stop, tc.wantDoc, others)
			} else if len(others) > 0 {
				t.Logf("also at %s: %v", tc.stop, others)
			}
			t.Run("delve", func(t *testing.T) {
				dlv := dlvPath(t)
				listed := map[uint64]dlvGoroutine{}
				for _, g := range parseDelve(runDelve(t, dlv, twin, corePath)) {
					listed[g.ID] = g
				}
				for id, ours := range checked {
					d, ok := listed[id]
					if !ok {
						t.Fatalf("Delve did not list goroutine %d", id)
					}
					// Delve shows the g0 frames above the switch too.
					i := slices.IndexFunc(d.Frames, func(f dlvFrame) bool { return f.PC == ours[0].PC && f.Func == ours[0].Func })
					if i < 0 || !slices.Equal(d.Frames[i:], ours) {
						t.Errorf("Delve's goroutine %d:\n%s\nours:\n%s", id, formatDlv(d.Frames), formatDlv(ours))
					} else {
						t.Logf("Delve's frames of goroutine %d after its %d on g0 are ours, %d of them (function, PC, file:line)", id, i, len(ours))
					}
				}
			})
		})
	}
}

// gdbCore runs cgoprog exe in mode until it is ready, stops it with gdb
// at the breakpoint stop, and returns the core gdb's gcore wrote there.
func gdbCore(t *testing.T, gdb, exe, mode string, stop uint64) string {
	t.Helper()
	cmd := exec.Command(exe, mode)
	cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1", "GOGC=off")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line := make([]byte, 6)
	if _, err := io.ReadFull(stdout, line); err != nil || string(line) != "ready\n" {
		t.Fatalf("the program did not get ready: %v", err)
	}
	corePath := filepath.Join(t.TempDir(), "core")
	g := exec.Command(gdb, "-batch", "-nx", "-p", strconv.Itoa(cmd.Process.Pid),
		"-ex", "handle all nostop noprint pass",
		"-ex", fmt.Sprintf("break *%#x", stop),
		"-ex", "continue",
		"-ex", "gcore "+corePath)
	timer := time.AfterFunc(2*time.Minute, func() { g.Process.Kill() })
	out, err := g.CombinedOutput()
	timer.Stop()
	if _, serr := os.Stat(corePath); err != nil || serr != nil {
		t.Fatalf("gdb: %v %v\n%s", err, serr, out)
	}
	return corePath
}
