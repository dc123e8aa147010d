//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/coretest"
	"github.com/gosym-dev/gosym/internal/oracle"
)

// TestGoroutinesCommand runs "gosym goroutines" on the stripped binary
// and the core of coretest's crash (linux/amd64): the text output reads
// as the runtime's traceback does, and every goroutine the runtime
// printed is there with the same status and the same physical frames
// (function, pc=, sp=, file:line); -json prints the same goroutines, one
// object per line, in the schema of the API contract exactly.
func TestGoroutinesCommand(t *testing.T) {
	for _, v := range []struct {
		name  string
		flags []string
	}{{"exec", nil}, {"pie", []string{"-buildmode=pie"}}} {
		t.Run(v.name, func(t *testing.T) {
			cr, err := coretest.Crash(t.TempDir(), coretest.Targets[0], "", v.flags...)
			if errors.Is(err, coretest.ErrUnavailable) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			checkGoroutinesCommand(t, cr)
		})
	}
}

// checkGoroutinesCommand compares gosym goroutines on the crash core of
// cr with the runtime's traceback of the same process.
func checkGoroutinesCommand(t *testing.T, cr *coretest.Run) {
	var stdout, stderr bytes.Buffer
	if status := run([]string{"goroutines", cr.Binary, cr.Core}, nil, &stdout, &stderr); status != 0 {
		t.Fatalf("status %d: %s", status, stderr.String())
	}
	ours := map[string]oracle.Goroutine{}
	for _, g := range oracle.ParseTraceback(stdout.String()) {
		ours[strings.Fields(g.Header)[1]] = g
	}
	status := map[string]string{}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(line, "goroutine ") {
			f := strings.Fields(line)
			st := line[strings.IndexByte(line, '[')+1 : strings.LastIndexByte(line, ']')]
			st, _, _ = strings.Cut(st, ",")
			status[f[1]] = st
		}
	}
	agree := 0
	for _, w := range oracle.ParseTraceback(cr.Output) {
		id := strings.Fields(w.Header)[1]
		if id == "0" || len(w.Frames) == 0 {
			continue
		}
		g, ok := ours[id]
		if !ok {
			t.Errorf("goroutine %s printed by the runtime (%s), not by gosym goroutines", id, w.Header)
			continue
		}
		if want := w.Header[strings.LastIndexByte(w.Header, '[')+1 : strings.LastIndexByte(w.Header, ']')]; !strings.HasPrefix(want, status[id]) {
			t.Errorf("goroutine %s: status %q, the runtime printed [%s]", id, status[id], want)
		}
		same := len(g.Frames) == len(w.Frames)
		for i := 0; same && i < len(g.Frames); i++ {
			a, b := g.Frames[i], w.Frames[i]
			same = oracle.PrintName(a.Func) == b.Func && a.PC == b.PC && a.SP == b.SP && a.File == b.File && a.Line == b.Line
		}
		if !same {
			t.Errorf("goroutine %s: frames differ:\n%+v\nruntime:\n%+v\n%s", id, g.Frames, w.Frames, stdout.String())
			continue
		}
		agree++
	}
	if agree < 8 {
		t.Errorf("only %d goroutines agree with the runtime's traceback", agree)
	}

	stdout.Reset()
	if status := run([]string{"goroutines", "-json", cr.Binary, cr.Core}, nil, &stdout, &stderr); status != 0 {
		t.Fatalf("-json: status %d: %s", status, stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		var g goroutineJSON
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&g); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		n++
		id := strconv.FormatUint(g.ID, 10)
		if _, ok := ours[id]; !ok || g.Status != status[id] || len(g.Frames) == 0 {
			t.Errorf("-json: goroutine %d [%s] with %d frames; text: [%s]", g.ID, g.Status, len(g.Frames), status[id])
		}
		for _, f := range g.Frames {
			if !strings.HasPrefix(f.PC, "0x") || !strings.HasPrefix(f.SP, "0x") || f.Function == "" {
				t.Errorf("-json: goroutine %d: frame %+v", g.ID, f)
			}
		}
		if (g.CreatedBy == nil) != (g.ID == 1) {
			t.Errorf("-json: goroutine %d: created_by %+v", g.ID, g.CreatedBy)
		}
	}
	if n != len(ours) {
		t.Errorf("-json: %d goroutines, text: %d", n, len(ours))
	}
	t.Logf("%d goroutines listed; %d agree with the runtime's traceback", n, agree)

	// The core read with another Go binary (the test's own): a clear
	// error, no goroutine.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if status := run([]string{"goroutines", self, cr.Core}, nil, &stdout, &stderr); status == 0 || stdout.Len() != 0 ||
		!strings.Contains(stderr.String(), "no goroutine list found") && !strings.Contains(stderr.String(), "is not the binary the process ran") {
		t.Errorf("another binary: status %d, stdout %q, stderr %q", status, stdout.String(), stderr.String())
	}
}
