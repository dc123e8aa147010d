package goroutines_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/internal/coretest"
	"github.com/gosym-dev/gosym/internal/objtest"
)

// crashNil builds testdata/crashprog with the toolchain of version (""
// for the installed one), stripped and unstripped, and runs the stripped
// one until it dies of its nil dereference under GOTRACEBACK=crash,
// leaving a core file in dir.
func crashNil(t *testing.T, version string) *coretest.Run {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the oracle runs on linux/amd64")
	}
	if pat, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); bytes.HasPrefix(pat, []byte("|")) {
		t.Skip("the kernel pipes cores to a program (core_pattern)")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "crashprog", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0", "GOFLAGS=", "GOTOOLCHAIN=local")
	pkgDir := filepath.Dir(src)
	if version != "" {
		goroot, err := coretest.Toolchain(version)
		if err != nil {
			t.Skip(err)
		}
		// A GOPATH holding the program: old releases know no modules.
		gopath := filepath.Join(dir, "gopath")
		pkgDir = filepath.Join(gopath, "src", "crashprog")
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(pkgDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkgDir, "main.go"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		goCmd = filepath.Join(goroot, "bin", "go")
		env = append(env, "GOROOT="+goroot, "GOPATH="+gopath, "GO111MODULE=off", "GOENV=off",
			"GOCACHE="+filepath.Join(os.TempDir(), "gosym-coretest-cache"))
	}
	build := func(name string, ldflags string) string {
		exe := filepath.Join(dir, name)
		cmd := exec.Command(goCmd, "build", "-ldflags="+ldflags, "-o", exe, ".")
		cmd.Dir, cmd.Env = pkgDir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		return exe
	}
	exe := build("crashprog", "-s -w")
	twin := build("crashprog.unstripped", "")
	cmd := exec.Command("bash", "-c", `ulimit -c unlimited && exec "$1"`, "bash", exe)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTRACEBACK=crash", "GOMAXPROCS=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	err = cmd.Wait()
	timer.Stop()
	if err == nil || !strings.Contains(out.String(), "nil pointer dereference") {
		t.Fatalf("the program did not die of its nil dereference (%v):\n%s", err, out.String())
	}
	cores, _ := filepath.Glob(filepath.Join(dir, "core*"))
	if len(cores) != 1 {
		t.Skipf("no core file written in %s (core_pattern, ulimit -c)", dir)
	}
	return &coretest.Run{Binary: exe, Unstripped: twin, Output: out.String(), Core: cores[0]}
}

// wantStatuses are statuses the runtime prints for crashprog's
// goroutines in every release: each must be among the goroutines that
// agree.
var wantStatuses = []string{"chan receive", "chan send", "select", "sleep", "IO wait", "syscall", "running"}

// TestNilOracle is the runtime oracle on a program that dies of a nil
// dereference with goroutines parked in known states (testdata/crashprog):
// every goroutine the runtime printed, from the stripped binary and its
// unstripped twin, with the same status, frames (the crashing goroutine's
// frames from its thread's registers, which go on into the runtime's
// crash code, end with the runtime's) and creator.
func TestNilOracle(t *testing.T) {
	run := crashNil(t, "")
	for _, bin := range []string{run.Binary, run.Unstripped} {
		a := compare(t, bin, run, runtime.Version())
		checkStatuses(t, a, wantStatuses)
	}
}

// TestNilOracleReleases is TestNilOracle with the toolchains of other
// releases (a heavy oracle: GOSYM_HEAVY=1).
func TestNilOracleReleases(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	for _, v := range oracleReleases {
		t.Run(v, func(t *testing.T) {
			run := crashNil(t, v)
			for _, bin := range []string{run.Binary, run.Unstripped} {
				checkStatuses(t, compare(t, bin, run, v), wantStatuses)
			}
		})
	}
}

func checkStatuses(t *testing.T, a agreement, want []string) {
	t.Helper()
	if a.refused {
		return
	}
	for _, s := range want {
		if a.statuses[s] == 0 {
			t.Errorf("no goroutine [%s] agrees (statuses: %v)", s, a.statuses)
		}
	}
}
