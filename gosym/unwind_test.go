//go:build linux

package gosym

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/internal/elfcore"
	"github.com/gosym-dev/gosym/internal/oracle"
	"github.com/gosym-dev/gosym/object"
)

// unwindTargets are the architectures of the runtime unwinding oracle:
// the host's own, and link-register machines under qemu-user. lr names
// the link register in the runtime's register dump (dumpregs).
var unwindTargets = []struct {
	goarch, qemu, lr string
}{
	{"amd64", "", ""},
	{"386", "", ""},
	{"arm64", "qemu-aarch64", "lr"},
	{"ppc64", "qemu-ppc64", "link"},
	{"ppc64le", "qemu-ppc64le", "link"},
	{"arm", "qemu-arm", "lr"},
	{"s390x", "qemu-s390x", "r14"},
	// riscv64, mips and loong64: the qemu-user of Debian 12 (7.2) writes
	// no core for them.
}

// crashRun is one run of testdata/unwindprog that died of SIGQUIT under
// GOTRACEBACK=crash.
type crashRun struct {
	bin    []byte // the stripped binary
	output string // what the runtime printed
	core   *elfcore.File
}

var crashRuns sync.Map // goarch -> *crashOnce

type crashOnce struct {
	once sync.Once
	run  *crashRun
	skip string
	err  error
}

// runCrash builds testdata/unwindprog stripped for goarch with the
// installed toolchain, runs it (under qemu-user if not the host's
// architecture) until it dies of SIGQUIT under GOTRACEBACK=crash with
// core dumps enabled, and returns its output and core. It skips when the
// machine cannot run it or the kernel sends cores elsewhere
// (/proc/sys/kernel/core_pattern names a program); .ci/run installs
// qemu-user so that CI runs all of it.
func runCrash(t *testing.T, goarch, qemu string) *crashRun {
	t.Helper()
	v, _ := crashRuns.LoadOrStore(goarch, new(crashOnce))
	c := v.(*crashOnce)
	c.once.Do(func() { c.run, c.skip, c.err = doCrash(goarch, qemu) })
	if c.skip != "" {
		t.Skip(c.skip)
	}
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c.run
}

func doCrash(goarch, qemu string) (run *crashRun, skip string, err error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return nil, "no go command", nil
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" && runtime.GOARCH != goarch {
		return nil, "the oracle runs on linux/amd64 hosts", nil
	}
	var runner []string
	if qemu != "" {
		q, err := exec.LookPath(qemu)
		if err != nil {
			return nil, qemu + " not installed (apt-get install qemu-user; .ci/run does)", nil
		}
		runner = []string{q}
	} else if pat, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); bytes.HasPrefix(pat, []byte("|")) {
		// The kernel pipes cores to a program: let qemu-user write it.
		q := map[string]string{"amd64": "qemu-x86_64", "386": "qemu-i386"}[goarch]
		if q, err = exec.LookPath(q); err != nil {
			return nil, "core_pattern is a pipe and qemu-user is not installed", nil
		}
		runner = []string{q}
	}
	dir, err := os.MkdirTemp("", "gosym-unwind-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	exe := filepath.Join(dir, "prog")
	build := exec.Command(goCmd, "build", "-ldflags=-s -w", "-o", exe, "./testdata/unwindprog")
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	script := `ulimit -c unlimited && exec "$@" quit`
	cmd := exec.Command("bash", append([]string{"-c", script, "bash"}, append(runner, exe)...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTRACEBACK=crash", "GODEBUG=asyncpreemptoff=1", "GOMAXPROCS=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	err = cmd.Wait()
	timer.Stop()
	if err == nil || !strings.Contains(out.String(), "SIGQUIT: quit") {
		return nil, "", fmt.Errorf("the program did not die of SIGQUIT (%v):\n%s", err, out.String())
	}
	// qemu-user names the guest's core qemu_<prog>_<date>-<pid>.core (and
	// the host kernel may dump qemu itself as "core": not ours); the
	// kernel writes "core" or "core.<pid>".
	pattern := "core*"
	if len(runner) > 0 {
		pattern = "qemu_*.core"
	}
	cores, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(cores) != 1 {
		return nil, fmt.Sprintf("no core file written in %s (core_pattern, ulimit -c?)", dir), nil
	}
	coreData, err := os.ReadFile(cores[0])
	if err != nil {
		return nil, "", err
	}
	core, err := elfcore.NewFile(bytes.NewReader(coreData))
	if err != nil {
		return nil, "", err
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		return nil, "", err
	}
	return &crashRun{bin: bin, output: out.String(), core: core}, "", nil
}

// crashGoroutine is a goroutine of the crash output with the registers
// its traceback starts from.
type crashGoroutine struct {
	oracle.Goroutine
	regs   Regs
	signal bool // interrupted by the signal: the traceback starts from the signal context
}

var dumpReg = regexp.MustCompile(`(?:^|\t)([a-z0-9]+)\s+0x([0-9a-f]+)`)

// crashGoroutines splits the output into the sections each thread printed
// ("SIGQUIT: quit" ... register dump) and returns every goroutine with
// frames. The first goroutine of a section is the one the signal
// interrupted: its first frame's pc= and sp= are the signal context's PC
// and SP, and its LR is in the section's register dump. The others (the
// other goroutines, parked) start from their saved pc and sp, with no LR.
func crashGoroutines(output, lrName string) []crashGoroutine {
	var out []crashGoroutine
	sections := strings.Split(output, "SIGQUIT: quit\n")
	for _, sec := range sections[1:] {
		var lr uint64
		for _, line := range strings.Split(sec, "\n") {
			for _, m := range dumpReg.FindAllStringSubmatch(line, -1) {
				if m[1] == lrName {
					fmt.Sscanf(m[2], "%x", &lr)
				}
			}
		}
		for i, g := range oracle.ParseTraceback(sec) {
			if len(g.Frames) == 0 {
				continue
			}
			cg := crashGoroutine{Goroutine: g, regs: Regs{PC: g.Frames[0].PC, SP: g.Frames[0].SP}}
			if i == 0 {
				cg.regs.LR, cg.signal = lr, true
			}
			out = append(out, cg)
		}
	}
	return out
}

// TestUnwindRuntime is the runtime oracle of Unwind: testdata/unwindprog,
// built stripped, dies of SIGQUIT under GOTRACEBACK=crash, and the runtime
// prints the frames (pc=, sp=) of every goroutine: from the signal context
// for the goroutine each thread was running (spinning goroutines, idle
// threads' g0 stacks), from the saved state for parked ones. Unwind, from
// the same registers, over the memory of the core the process left, must
// find exactly those frames. Every thread's own registers in the core
// (NT_PRSTATUS: inside the runtime's signal handler by then) must unwind,
// without error, to the top of the signal stack.
func TestUnwindRuntime(t *testing.T) {
	for _, tg := range unwindTargets {
		t.Run(tg.goarch, func(t *testing.T) {
			if tg.qemu != "" || tg.goarch == "386" {
				t.Parallel()
			}
			run := runCrash(t, tg.goarch, tg.qemu)
			obj, err := object.NewBytes(run.bin)
			if err != nil {
				t.Fatal(err)
			}
			tab, err := NewTable(obj)
			if err != nil {
				t.Fatal(err)
			}
			if got := run.core.GOARCH(); got != tg.goarch {
				t.Errorf("core's architecture %q", got)
			}
			var signal, parked, frames int
			for _, g := range crashGoroutines(run.output, tg.lr) {
				got, err := unwindFrames(tab, g.regs, run.core)
				if err != nil {
					t.Errorf("%s: %v", g.Header, err)
				}
				if !sameFrames(got, g.Frames) {
					t.Errorf("%s (regs %+v):\nUnwind:\n%s\nruntime:\n%s", g.Header, g.regs, formatFrames(got), formatFrames(g.Frames))
					continue
				}
				frames += len(got)
				if g.signal {
					signal++
				} else {
					parked++
				}
			}
			if signal < 4 || parked < 3 {
				t.Errorf("only %d goroutines from signal contexts and %d parked ones agree", signal, parked)
			}
			for _, th := range run.core.Threads {
				got, err := unwindFrames(tab, Regs{PC: th.PC, SP: th.SP, LR: th.LR}, run.core)
				if err != nil && tg.goarch == "ppc64le" && len(got) > 0 && got[len(got)-1].Func == "runtime.sigtramp" &&
					errors.Is(err, ErrPCNotFound) {
					// ppc64le's runtime.sigtramp is not TOPFRAME (ppc64's
					// is): the runtime's unwinder also reads a return
					// address outside Go there, and stops.
					continue
				}
				if err != nil {
					t.Errorf("thread %d: %v\n%s", th.PID, err, formatFrames(got))
					continue
				}
				last, _ := tab.ResolveFunction(got[len(got)-1].PC)
				if last.Kind() != KindTop {
					t.Errorf("thread %d: unwinding ends at %s, not at a top frame", th.PID, last.Name())
				}
			}
			t.Logf("%s: %d goroutines from signal contexts, %d parked, %d frames agree; %d threads of the core unwind to a top frame",
				tg.goarch, signal, parked, frames, len(run.core.Threads))
		})
	}
}

// unwindFrames collects Unwind's frames, named as the runtime prints them.
func unwindFrames(tab *Table, regs Regs, mem *elfcore.File) ([]oracle.TracebackFrame, error) {
	var out []oracle.TracebackFrame
	for fr, err := range tab.Unwind(regs, mem) {
		if err != nil {
			return out, err
		}
		out = append(out, oracle.TracebackFrame{Func: oracle.PrintName(fr.Function.Name()), SP: fr.SP, PC: fr.PC})
	}
	if len(out) == 0 {
		return nil, errors.New("no frames")
	}
	return out, nil
}

func sameFrames(got, want []oracle.TracebackFrame) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].PC != want[i].PC || got[i].SP != want[i].SP || got[i].Func != want[i].Func {
			return false
		}
	}
	return true
}

func formatFrames(fs []oracle.TracebackFrame) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\t%s pc=%#x sp=%#x\n", f.Func, f.PC, f.SP)
	}
	return b.String()
}
