//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/oracle"
)

// TestGoroutinesLive runs gosym goroutines -json PID on a live program
// (liveproc's test program, fixed and position-independent) whose
// goroutines wait in known states (a channel, a select, a mutex, a sleep,
// a blocking read, extra parked ones), and compares each waiting goroutine
// with the program's own runtime.Stack(buf, true), written before it
// signalled readiness: the same id, status and physical frames (function
// names, file:line), and its creator. The program must go on after the
// command, and exit when told.
func TestGoroutinesLive(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("live processes are tested on linux/amd64 only, not %s (qemu-user does not support ptrace of its guest)", runtime.GOARCH)
	}
	if os.Geteuid() != 0 {
		scope, _ := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
		if s := string(bytes.TrimSpace(scope)); s != "" && s != "0" {
			t.Skipf("ptrace of a child is not permitted here (not root; yama ptrace_scope %s)", s)
		}
	}
	for _, v := range []struct {
		name  string
		flags []string
	}{{"exec", nil}, {"pie", []string{"-buildmode=pie"}}} {
		t.Run(v.name, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "liveprog")
			cmd := exec.Command(goCommand(t), append(append([]string{"build"}, v.flags...), "-o", exe, "../../liveproc/testdata/liveprog")...)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOTOOLCHAIN=local")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			checkGoroutinesLive(t, exe)
		})
	}
}

func checkGoroutinesLive(t *testing.T, exe string) {
	stackFile := filepath.Join(filepath.Dir(exe), "stack.txt")
	prog := exec.Command(exe, "-stack", stackFile, "-park", "3")
	prog.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1", "GOMAXPROCS=4")
	stdin, err := prog.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := prog.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Process.Kill(); prog.Wait() })
	r := bufio.NewReader(out)
	if line, err := r.ReadString('\n'); !strings.HasPrefix(line, "ready ") {
		t.Fatalf("the program did not get ready: %q %v", line, err)
	}
	stack, err := os.ReadFile(stackFile)
	if err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	if status := run([]string{"goroutines", "-json", strconv.Itoa(prog.Process.Pid)}, nil, &stdout, &stderr); status != 0 {
		t.Fatalf("status %d: %s", status, stderr.String())
	}
	if !strings.Contains(stderr.String(), "was stopped for") {
		t.Errorf("stderr does not say how long the process was stopped: %q", stderr.String())
	}
	ours := map[uint64]goroutineJSON{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var g goroutineJSON
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&g); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		ours[g.ID] = g
	}

	tab := openTable(t, exe)
	compared := 0
	for _, w := range parseStack(string(stack)) {
		f := strings.Fields(w.header)
		id, _ := strconv.ParseUint(f[1], 10, 64)
		status := w.header[strings.IndexByte(w.header, '[')+1 : strings.LastIndexByte(w.header, ']')]
		status, _, _ = strings.Cut(status, ",")
		g, ok := ours[id]
		if !ok {
			t.Errorf("goroutine %d [%s] of runtime.Stack is not listed", id, status)
			continue
		}
		if status == "running" || status == "runnable" {
			continue // the spinners, and main: they ran on since
		}
		compared++
		if g.Status != status {
			t.Errorf("goroutine %d: status %q, runtime.Stack said %q", id, g.Status, status)
		}
		var got []string
		for _, fr := range g.Frames {
			if !fr.Inlined && shownByStack(t, tab, fr.Function) {
				got = append(got, fmt.Sprintf("%s %s:%d", oracle.PrintName(fr.Function), fr.File, fr.Line))
			}
		}
		want := w.frames
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("goroutine %d [%s]: frames\n%s\nruntime.Stack:\n%s", id, status, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if g.CreatedBy == nil || g.CreatedBy.Goroutine != 1 || !strings.HasPrefix(g.CreatedBy.Function, "main.") {
			t.Errorf("goroutine %d: created by %+v, want a main function in goroutine 1", id, g.CreatedBy)
		}
	}
	if compared < 8 {
		t.Errorf("only %d waiting goroutines compared; want at least 8 (5 states and 3 parked)", compared)
	}
	t.Logf("%d goroutines listed, %d waiting ones compared with runtime.Stack; %s", len(ours), compared, strings.TrimSpace(stderr.String()))

	// The process goes on: it answers and exits cleanly.
	if _, err := fmt.Fprintln(stdin, "quit"); err != nil {
		t.Fatal(err)
	}
	if line, _ := r.ReadString('\n'); !strings.HasPrefix(line, "bye") {
		t.Errorf("after the command the program said %q, want bye", line)
	}
	if err := prog.Wait(); err != nil {
		t.Errorf("the program: %v", err)
	}
}

// stackGoroutine is a goroutine of runtime.Stack's output: its header and
// physical frames ("function file:line").
type stackGoroutine struct {
	header string
	frames []string
}

// parseStack returns the goroutines of runtime.Stack's output. A
// physical frame's position line carries the PC's offset (" +0x"); an
// inlined frame's does not.
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
				continue
			}
			g.frames = append(g.frames, fn[:strings.LastIndexByte(fn, '(')]+" "+pos)
		}
		gs = append(gs, g)
	}
	return gs
}

// shownByStack reports whether runtime.Stack shows a physical frame of the
// function name: it forces traceback level 1, where the runtime hides
// its own unexported functions and compiler-generated wrappers
// (runtime.showfuncinfo).
func shownByStack(t *testing.T, tab *gosym.Table, name string) bool {
	if rest, ok := strings.CutPrefix(name, "runtime."); ok {
		return rest != "" && unicode.IsUpper(rune(rest[0]))
	}
	f, err := tab.LookupFunction(name)
	if err != nil {
		t.Errorf("frame of %s: %v", name, err)
		return true
	}
	return !f.Wrapper()
}
