// Package coretest makes core files of a Go program whose stacks the
// runtime has printed, for the tests of stack unwinding: it builds
// gosym/testdata/unwindprog, runs it until it dies of SIGQUIT under
// GOTRACEBACK=crash (natively, or under qemu-user for other
// architectures), and collects its output and core file.
package coretest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/gosym-dev/gosym/internal/hostrun"
	"github.com/gosym-dev/gosym/internal/oracle"
)

// ErrUnavailable wraps the reasons a run cannot be made on this machine
// (no go command, no qemu-user, cores sent elsewhere): tests skip on it.
var ErrUnavailable = errors.New("coretest: unavailable")

// Target is an architecture of the oracle.
type Target struct {
	GOARCH string
	Qemu   string // the qemu-user program that runs it, "" for the host's own
	LR     string // the link register's name in the runtime's register dump; "" if none
}

// Targets are the architectures the oracle runs: the host's, and
// link-register machines under qemu-user. The qemu-user of Debian 12
// (7.2) writes no core for riscv64, mips or loong64 guests.
var Targets = []Target{
	{"amd64", "", ""},
	{"386", "", ""},
	{"arm64", "qemu-aarch64", "lr"},
	{"ppc64", "qemu-ppc64", "link"},
	{"ppc64le", "qemu-ppc64le", "link"},
	{"arm", "qemu-arm", "lr"},
	{"s390x", "qemu-s390x", "r14"},
}

// Run is one run of the program.
type Run struct {
	Binary     string // the stripped executable that ran
	Unstripped string // its unstripped twin (same code at the same addresses), for debuggers
	Output     string // what the program and its runtime printed
	Core       string // the core file
}

// repoRoot returns the repository's root directory.
func repoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", fmt.Errorf("%w: cannot locate the repository", ErrUnavailable)
	}
	return filepath.Join(filepath.Dir(file), "..", ".."), nil
}

// Toolchain returns the GOROOT of Go release version ("go1.12.17") from
// the module golang.org/toolchain, downloaded into the module cache if
// needed, as the go command's toolchain switching does.
func Toolchain(version string) (string, error) {
	mod := "golang.org/toolchain@v0.0.1-" + version + "." + runtime.GOOS + "-" + runtime.GOARCH
	cmd := exec.Command("go", "mod", "download", "-json", mod)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOTOOLCHAIN=local", "GOFLAGS=")
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil || info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("%w: go mod download %s: %v %s", ErrUnavailable, mod, err, info.Error)
	}
	// The module zip has no execute bits: set them, as the go command
	// does on first use.
	for _, sub := range []string{"pkg/tool", "bin"} {
		filepath.WalkDir(filepath.Join(info.Dir, sub), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := os.Stat(path); err == nil && fi.Mode()&0o111 == 0 {
					os.Chmod(path, fi.Mode()|0o111)
				}
			}
			return nil
		})
	}
	return info.Dir, nil
}

// Build builds gosym/testdata/unwindprog for linux/goarch into dir,
// stripped (-ldflags=-s -w) or not, with the installed toolchain, or
// with the one at goroot (in GOPATH mode, which every release has), and
// the further go build flags (such as "-buildmode=pie").
func Build(dir, goarch, goroot string, stripped bool, flags ...string) (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("%w: no go command", ErrUnavailable)
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	env := append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=", "GOTOOLCHAIN=local")
	pkg := "./gosym/testdata/unwindprog"
	if goroot != "" {
		// A GOPATH holding the program: old releases know no modules.
		gopath := filepath.Join(dir, "gopath")
		src := filepath.Join(gopath, "src", "unwindprog")
		if err := os.MkdirAll(src, 0o755); err != nil {
			return "", err
		}
		data, err := os.ReadFile(filepath.Join(root, "gosym", "testdata", "unwindprog", "main.go"))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(src, "main.go"), data, 0o644); err != nil {
			return "", err
		}
		goCmd, root, pkg = filepath.Join(goroot, "bin", "go"), src, "."
		env = append(env, "GOROOT="+goroot, "GOPATH="+gopath, "GO111MODULE=off", "GOENV=off",
			"GOCACHE="+filepath.Join(os.TempDir(), "gosym-coretest-cache"))
	}
	exe := filepath.Join(dir, "prog-"+goarch)
	ldflags := "-ldflags="
	if stripped {
		ldflags = "-ldflags=-s -w"
	} else {
		exe += ".unstripped"
	}
	cmd := exec.Command(goCmd, append(append([]string{"build", ldflags}, flags...), "-o", exe, pkg)...)
	cmd.Dir = root
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return exe, nil
}

// runner returns the command prefix that runs a linux/goarch program here.
func runner(tg Target) ([]string, error) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" && runtime.GOARCH != tg.GOARCH {
		return nil, fmt.Errorf("%w: the oracle runs on linux/amd64 hosts", ErrUnavailable)
	}
	q := tg.Qemu
	if q == "" {
		pat, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
		if !bytes.HasPrefix(pat, []byte("|")) {
			// The kernel writes the core, if it runs the program.
			// 386 needs IA-32 emulation; qemu-i386 cannot stand in
			// for it here: the program must take SIGQUIT, and
			// qemu-i386 (7.2) delivers signals to Go's 386 runtime
			// unreliably (package hostrun): it died of SIGTRAP once
			// in a few runs.
			if !hostrun.Native(tg.GOARCH) {
				return nil, fmt.Errorf("%w: this kernel does not run linux/%s programs (no IA-32 emulation), and qemu-user delivers SIGQUIT to them unreliably", ErrUnavailable, tg.GOARCH)
			}
			return nil, nil
		}
		// The kernel pipes cores to a program: let qemu-user write it.
		q = map[string]string{"amd64": "qemu-x86_64", "386": "qemu-i386"}[tg.GOARCH]
	}
	path, err := exec.LookPath(q)
	if err != nil {
		return nil, fmt.Errorf("%w: %s not installed (apt-get install qemu-user; .ci/run does)", ErrUnavailable, q)
	}
	return []string{path}, nil
}

// Crash builds the program for tg into dir (with the installed toolchain,
// or the one at goroot, and the further go build flags) and runs it there
// with core dumps enabled until it dies of SIGQUIT under GOTRACEBACK=crash.
func Crash(dir string, tg Target, goroot string, flags ...string) (*Run, error) {
	run, err := runner(tg)
	if err != nil {
		return nil, err
	}
	return crash(dir, tg, run, goroot, flags...)
}

// CrashUnder is Crash with the program run by the qemu-user program qemu
// (such as qemu-i386 for 386 where the kernel has no IA-32 emulation),
// which Crash does not use for tg. A run that does not die of SIGQUIT is
// an error: callers that know the emulation to be unreliable retry.
func CrashUnder(dir string, tg Target, qemu, goroot string, flags ...string) (*Run, error) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return nil, fmt.Errorf("%w: the oracle runs on linux/amd64 hosts", ErrUnavailable)
	}
	path, err := exec.LookPath(qemu)
	if err != nil {
		return nil, fmt.Errorf("%w: %s not installed (apt-get install qemu-user; .ci/run does)", ErrUnavailable, qemu)
	}
	return crash(dir, tg, []string{path}, goroot, flags...)
}

// crash is Crash with the command prefix run (nil: run natively).
func crash(dir string, tg Target, run []string, goroot string, flags ...string) (*Run, error) {
	exe, err := Build(dir, tg.GOARCH, goroot, true, flags...)
	if err != nil {
		return nil, err
	}
	twin, err := Build(dir, tg.GOARCH, goroot, false, flags...)
	if err != nil {
		return nil, err
	}
	for _, old := range globCores(dir) {
		os.Remove(old)
	}
	cmd := exec.Command("bash", append([]string{"-c", `ulimit -c unlimited && exec "$@" quit`, "bash"}, append(run, exe)...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTRACEBACK=crash", "GODEBUG=asyncpreemptoff=1", "GOMAXPROCS=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	err = cmd.Wait()
	timer.Stop()
	if err == nil || !strings.Contains(out.String(), "SIGQUIT: quit") {
		return nil, fmt.Errorf("the program did not die of SIGQUIT (%v):\n%s", err, out.String())
	}
	// qemu-user names the guest's core qemu_<prog>_<date>-<pid>.core (and
	// the host kernel may dump qemu itself as "core": not ours); the
	// kernel writes "core" or "core.<pid>".
	pattern := "core*"
	if len(run) > 0 {
		pattern = "qemu_*.core"
	}
	cores, _ := filepath.Glob(filepath.Join(dir, pattern))
	if host, _ := filepath.Glob(filepath.Join(dir, "core*")); len(run) > 0 {
		for _, h := range host {
			os.Remove(h) // qemu's own core, hundreds of MB
		}
	}
	if len(cores) != 1 {
		return nil, fmt.Errorf("%w: no core file written in %s (core_pattern, ulimit -c)", ErrUnavailable, dir)
	}
	return &Run{Binary: exe, Unstripped: twin, Output: out.String(), Core: cores[0]}, nil
}

func globCores(dir string) []string {
	a, _ := filepath.Glob(filepath.Join(dir, "core*"))
	b, _ := filepath.Glob(filepath.Join(dir, "qemu_*.core"))
	return append(a, b...)
}

// Gcore builds the program for the host's architecture into dir, and its
// unstripped twin, runs it until every goroutine spins, dumps it with
// gdb's gcore (every thread stopped where it runs), then kills it with
// SIGQUIT under GOTRACEBACK=crash. A spinning goroutine does not leave its
// loop in between (asynchronous preemption is off), so where gcore caught
// its thread in the loop, the runtime's frames for it are those of the
// core's thread but for the innermost PC (Spinning). Where gcore catches a
// thread depends on the scheduler: on a loaded machine, a spinning
// goroutine's thread can be elsewhere (in the runtime, or descheduled
// before its loop). gcore writes every mapping, about 1.2 GB for this
// program on amd64.
func Gcore(dir, goarch string) (*Run, error) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" || goarch != "amd64" && goarch != "386" {
		return nil, fmt.Errorf("%w: gcore runs here for linux/amd64 and 386 only", ErrUnavailable)
	}
	gcore, err := exec.LookPath("gcore")
	if err != nil {
		return nil, fmt.Errorf("%w: no gcore (apt-get install gdb)", ErrUnavailable)
	}
	exe, err := Build(dir, goarch, "", true)
	if err != nil {
		return nil, err
	}
	twin, err := Build(dir, goarch, "", false)
	if err != nil {
		return nil, err
	}
	if !hostrun.Native(goarch) {
		return nil, fmt.Errorf("%w: this kernel does not run linux/%s binaries (no IA32 emulation), and gcore cannot dump a qemu-user guest", ErrUnavailable, goarch)
	}
	cmd := exec.Command(exe)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTRACEBACK=crash", "GODEBUG=asyncpreemptoff=1", "GOMAXPROCS=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer cmd.Process.Kill()
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "ready" {
		return nil, fmt.Errorf("the program did not get ready: %s", stderr.String())
	}
	prefix := filepath.Join(dir, "gcore")
	if out, err := exec.Command(gcore, "-o", prefix, fmt.Sprint(cmd.Process.Pid)).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gcore: %v\n%s", err, out)
	}
	if err := cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		return nil, err
	}
	for sc.Scan() {
	}
	cmd.Wait()
	return &Run{Binary: exe, Unstripped: twin, Output: stderr.String(), Core: fmt.Sprintf("%s.%d", prefix, cmd.Process.Pid)}, nil
}

// Goroutine is a goroutine of the runtime's output with the registers
// its traceback starts from.
type Goroutine struct {
	oracle.Goroutine
	PC, SP, LR uint64
	// Signal says the traceback starts from a signal context (the
	// goroutine the thread was running: its LR, if any, is the one of the
	// thread's register dump); otherwise from the goroutine's saved state,
	// whose LR the runtime does not print.
	Signal bool
}

var dumpReg = regexp.MustCompile(`(?:^|\t)([a-z0-9]+)\s+0x([0-9a-f]+)`)

// Goroutines splits the output into the sections each thread printed
// ("SIGQUIT: quit" ... register dump) and returns every goroutine with
// frames. The first goroutine of a section is the one the signal
// interrupted: its first frame's pc= and sp= are the signal context's PC
// and SP, and its LR is in the section's register dump (lrName). The
// others (parked goroutines) start from their saved pc and sp.
func Goroutines(output, lrName string) []Goroutine {
	var out []Goroutine
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
			cg := Goroutine{Goroutine: g, PC: g.Frames[0].PC, SP: g.Frames[0].SP}
			if i == 0 {
				cg.LR, cg.Signal = lr, true
			}
			out = append(out, cg)
		}
	}
	return out
}

// Spinning returns the goroutines of a Gcore run's output that spin in
// the program's main.spin functions, by their SP: the thread's SP when
// SIGQUIT interrupted it, constant in the loop.
func Spinning(output string) map[uint64]Goroutine {
	spin := make(map[uint64]Goroutine)
	for _, g := range Goroutines(output, "") {
		if g.Signal && strings.HasPrefix(g.Frames[0].Func, "main.spin") {
			spin[g.SP] = g
		}
	}
	return spin
}

// InLoop reports whether frames, unwound from a thread's registers in a
// Gcore core, start in g's loop: in g's innermost function, at its SP.
func (g Goroutine) InLoop(frames []oracle.TracebackFrame) bool {
	return len(frames) > 0 && frames[0].Func == g.Frames[0].Func && frames[0].SP == g.SP
}

// SameFrames reports whether frames, unwound from the registers of a
// thread caught in g's loop, are the runtime's frames for g: the same
// functions at the same SPs, and the same PCs but for the innermost one,
// which is the thread's own register and may be at another instruction
// of the loop ("for {}" is a NOP and a jump back to it).
func (g Goroutine) SameFrames(frames []oracle.TracebackFrame) bool {
	if len(frames) != len(g.Frames) || !g.InLoop(frames) {
		return false
	}
	for i := 1; i < len(frames); i++ {
		if w := g.Frames[i]; frames[i].PC != w.PC || frames[i].SP != w.SP || frames[i].Func != w.Func {
			return false
		}
	}
	return true
}
