package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/gosym-dev/gosym/internal/objtest"
)

var pprofSink int

// cpuWork keeps the CPU busy in inlined and not inlined calls for d of
// CPU time, so that a CPU profile gets its samples (d/10ms at 100 Hz)
// however loaded the machine is; where the process's CPU time cannot be
// read, for d of wall time.
func cpuWork(d time.Duration) {
	cpu0, ok := processCPU()
	for end := time.Now().Add(d); ; {
		if cpu, _ := processCPU(); ok && cpu-cpu0 >= d || !ok && !time.Now().Before(end) {
			return
		}
		ss := make([]string, 500)
		for i := range ss {
			ss[i] = strconv.Itoa(i * 7919 % 1000)
		}
		sort.Strings(ss)
		pprofSink += len(strings.Join(ss, ","))
	}
}

// TestPprof records a CPU and a heap profile of the test binary, which
// runtime/pprof symbolizes, strips them to addresses and mappings, runs
// gosym pprof on them with the test binary, and compares every location
// with the runtime's, and `go tool pprof -traces` of both.
func TestPprof(t *testing.T) {
	if raceEnabled {
		// The race detector's instrumentation changes the stacks the
		// runtime records: its CPU profiles lose inlined frames that the
		// pclntab has (strconv.Itoa inlined into cpuWork, say), so
		// they are no oracle under -race. The test runs without it.
		t.Skip("runtime/pprof's stacks under -race are no oracle")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	var cpu bytes.Buffer
	if err := pprof.StartCPUProfile(&cpu); err != nil {
		t.Skipf("CPU profiling: %v", err) // another test is profiling
	}
	cpuWork(500 * time.Millisecond)
	pprof.StopCPUProfile()
	var heap bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&heap, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
	}{{"cpu", cpu.Bytes()}, {"heap", heap.Bytes()}} {
		t.Run(c.name, func(t *testing.T) {
			orig, err := profile.ParseData(c.data)
			if err != nil {
				t.Fatal(err)
			}
			stripped := orig.Copy()
			for _, l := range stripped.Location {
				l.Line = nil
			}
			stripped.Function = nil
			for _, m := range stripped.Mapping {
				m.HasFunctions, m.HasFilenames, m.HasLineNumbers, m.HasInlineFrames = false, false, false, false
			}
			in := filepath.Join(dir, c.name+".stripped.pb.gz")
			writeProfileFile(t, in, stripped)
			origPath := filepath.Join(dir, c.name+".pb.gz")
			writeProfileFile(t, origPath, orig)

			out := filepath.Join(dir, c.name+".symbolized.pb.gz")
			if got := mustRun(t, "", "pprof", "-o", out, in, exe); got != "" {
				t.Errorf("stdout %q", got)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			// Without -o, the same bytes on standard output.
			if got := mustRun(t, "", "pprof", in, exe); got != string(data) {
				t.Errorf("standard output differs from -o OUT")
			}
			got, err := profile.ParseData(data)
			if err != nil {
				t.Fatal(err)
			}
			byID := make(map[uint64]*profile.Location)
			for _, l := range got.Location {
				byID[l.ID] = l
			}
			equal, sameName := 0, 0
			for _, l := range orig.Location {
				want, have := lineStrings(l.Line, true), lineStrings(linesOf(byID[l.ID]), true)
				if slices.Equal(want, have) {
					equal++
					continue
				}
				// runtime/pprof keys functions by name: the file of
				// a frame may be another function's of that name.
				if slices.Equal(lineStrings(l.Line, false), lineStrings(linesOf(byID[l.ID]), false)) {
					sameName++
					continue
				}
				t.Errorf("location %#x: runtime %q, gosym pprof %q", l.Address, want, have)
			}
			if equal == 0 || sameName > equal/100 {
				t.Errorf("%d of %d locations equal, %d differ in files only", equal, len(orig.Location), sameName)
			}
			if !slices.ContainsFunc(got.Location, func(l *profile.Location) bool { return len(l.Line) > 1 }) {
				t.Errorf("no location has an inlined frame")
			}
			// What a user looks at. go tool pprof is built on first use
			// (minutes with a cold build cache on a loaded machine): a
			// heavy oracle.
			if !objtest.Heavy() {
				return
			}
			pp := goTool(t, "pprof")
			want := runTool(t, "", pp, "-traces", origPath)
			have := runTool(t, "", pp, "-traces", out)
			if !strings.Contains(have, "(inline)") {
				t.Errorf("go tool pprof -traces shows no inlined frame:\n%s", have)
			}
			if want != have {
				t.Errorf("go tool pprof -traces differ:\nruntime:\n%s\ngosym pprof:\n%s", want, have)
			}
		})
	}
}

// linesOf returns l's lines, nil for a nil l.
func linesOf(l *profile.Location) []profile.Line {
	if l == nil {
		return nil
	}
	return l.Line
}

// lineStrings formats lines for comparison, with or without files.
func lineStrings(lines []profile.Line, files bool) []string {
	var out []string
	for _, ln := range lines {
		s := ln.Function.Name + ":" + strconv.FormatInt(ln.Line, 10)
		if files {
			s += " " + ln.Function.Filename + " start " + strconv.FormatInt(ln.Function.StartLine, 10)
		}
		out = append(out, s)
	}
	return out
}

func writeProfileFile(t *testing.T, path string, p *profile.Profile) {
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadmeProfile runs the README's "Symbolize a profile" commands on a
// CPU profile of a stripped build of profiles/testdata/prog, and checks
// that go tool pprof shows inlined frames.
func TestReadmeProfile(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	if testing.Short() {
		t.Skip("runs go build and go run")
	}
	goCmd := goCommand(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Symbolize a profile\n")
	_, block, ok2 := strings.Cut(section, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 || !strings.HasPrefix(block, "go run ./cmd/gosym pprof ") {
		t.Fatalf("no profile commands in README.md:\n%s", block)
	}
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	build := exec.Command(goCmd, "build", "-ldflags=-s -w", "-o", app, ".")
	build.Dir = filepath.Join("..", "..", "profiles", "testdata", "prog")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.Command(app, filepath.Join(dir, "cpu.pb.gz"), filepath.Join(dir, "heap.pb.gz")).CombinedOutput(); err != nil {
		t.Fatalf("app: %v\n%s", err, out)
	}
	// The files named in the commands, in dir; the commands run at the
	// root of the repository.
	script := strings.NewReplacer("cpu.pb.gz", filepath.Join(dir, "cpu.pb.gz"), "./app", app,
		"cpu.symbolized.pb.gz", filepath.Join(dir, "cpu.symbolized.pb.gz")).Replace(block)
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = filepath.Join("..", "..")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, errOut.Bytes())
	}
	if !bytes.Contains(out, []byte("(inline)")) || !bytes.Contains(out, []byte("main.main")) {
		t.Errorf("%s\nshows no inlined frame or no main.main:\n%s", block, out)
	}
}

// TestPprofErrors checks the messages for a profile or a binary that
// cannot be read, and for binaries that match no mapping.
func TestPprofErrors(t *testing.T) {
	b := corpusEntry(t, "go1.26.8.linux-amd64")
	dir := t.TempDir()
	notProfile := filepath.Join(dir, "notprofile")
	os.WriteFile(notProfile, []byte("hello, world\n"), 0o666)
	// A profile of another binary: its mapping's build ID is the test
	// binary's, which the corpus binary does not have.
	var heap bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&heap, 0); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.pb.gz")
	os.WriteFile(other, heap.Bytes(), 0o666)
	missing := filepath.Join(dir, "missing")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{notProfile, b.Path}, "gosym: " + notProfile + ": "},
		{[]string{missing, b.Path}, "gosym: " + missing + ": no such file or directory"},
		{[]string{other, missing}, "gosym: " + missing + ": no such file or directory"},
		{[]string{other, notProfile}, "gosym: " + notProfile + ": object: "},
		{[]string{other, b.Path}, "gosym: " + other + ": profiles: no location is in a mapping of the binaries given: the main mapping "},
	} {
		out, errOut, status := gosymCmd(t, "", append([]string{"pprof"}, c.args...)...)
		if status != 1 || out != "" || !strings.HasPrefix(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("gosym pprof %q: status %d, stdout %q, stderr %q; want status 1 and %q", c.args, status, out, errOut, c.want)
		}
	}
}

// TestPprofMain checks -main BINARY: the main mapping's binary whatever
// its build ID (issue 22), here a profile of the test binary whose build
// IDs were replaced, which matches nothing without -main and says which
// build IDs differ.
func TestPprofMain(t *testing.T) {
	exe := selfPath(t)
	var heap bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&heap, 0); err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(heap.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	const other = "0123456789abcdef0123456789abcdef01234567"
	for _, m := range p.Mapping {
		m.BuildID = other
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "other.pb.gz")
	writeProfileFile(t, in, p)

	_, errOut, status := gosymCmd(t, "", "pprof", in, exe)
	if status != 1 || !strings.Contains(errOut, "no location is in a mapping") || !strings.Contains(errOut, `build ID "`+other+`"`) {
		t.Errorf("pprof without -main: status %d, stderr %q", status, errOut)
	}
	for _, args := range [][]string{{"-main", exe, in}, {"-main", exe, in, exe}} {
		out := mustRun(t, "", append([]string{"pprof"}, args...)...)
		got, err := profile.ParseData([]byte(out))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Function) == 0 || !got.Mapping[0].HasFunctions {
			t.Errorf("pprof %q: nothing symbolized", args)
		}
	}
	if _, errOut, status := gosymCmd(t, "", "pprof", in); status != 2 || !strings.Contains(errOut, "missing arguments") {
		t.Errorf("pprof PROFILE alone: status %d, stderr %q", status, errOut)
	}
}
