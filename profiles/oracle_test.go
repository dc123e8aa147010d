package profiles_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/hostrun"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/profiles"
)

// The runtime oracle: profiles that runtime/pprof recorded and symbolized
// itself, from the test program testdata/prog and from gofmt, built by
// several Go releases, stripped to addresses and mappings, symbolized
// again by Symbolize from the binary (built with -ldflags=-s -w: no
// symbol table, no DWARF) and compared location by location.
//
// GOSYM_PPROF_RELEASES lists the releases ("go1.10.8 go1.22.12 ...", or
// "all" for oracleReleases); by default only the installed toolchain.
// Other releases come from the module proxy as golang.org/toolchain.
// GOSYM_PPROF_AGREEMENT names a file to write the agreement table to.

// oracleReleases are the releases of the full run: 1.10 (the first whose
// runtime/pprof writes the proto format with mappings and whose go command
// has a build cache) to 1.27, twelve of them, each release whose
// runtime/pprof changed how it records stacks included (1.10–1.12,
// 1.14, 1.21), then every other one.
var oracleReleases = []string{
	"go1.10.8", "go1.11.13", "go1.12.17", "go1.14.15", "go1.16.15", "go1.18.10",
	"go1.20.14", "go1.21.13", "go1.22.12", "go1.24.13", "go1.26.8", "go1.27.4",
}

// A variant is one way of building the test program. Every variant is
// stripped (-s -w).
type variant struct {
	name   string
	goarch string
	flags  []string
	env    []string
}

var variants = []variant{
	{name: "stripped", goarch: "amd64", flags: []string{"-ldflags=-s -w"}},
	{name: "pie", goarch: "amd64", flags: []string{"-buildmode=pie", "-ldflags=-s -w"}},
	{name: "cgo-extlink", goarch: "amd64", flags: []string{"-tags", "gosymcgo", "-ldflags=-s -w -linkmode=external"}, env: []string{"CGO_ENABLED=1"}},
	{name: "386", goarch: "386", flags: []string{"-ldflags=-s -w"}, env: []string{"CGO_ENABLED=0"}},
}

func TestRuntimeOracle(t *testing.T) {
	if os.Getenv("GOSYM_PPROF_RELEASES") == "" {
		objtest.SkipUnlessHeavy(t) // the pprof oracle phase sets GOSYM_PPROF_RELEASES
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the oracle runs linux/amd64 and linux/386 binaries")
	}
	releases := strings.Fields(os.Getenv("GOSYM_PPROF_RELEASES"))
	if len(releases) == 1 && releases[0] == "all" {
		releases = oracleReleases
	}
	if len(releases) == 0 {
		releases = []string{""} // the installed toolchain
	}
	var (
		mu   sync.Mutex
		rows []*tally
	)
	for _, rel := range releases {
		goroot := objtest.Toolchain(t, rel)
		version := goVersion(t, goroot)
		minor := testcorpus.MinorVersion(version)
		t.Run(version, func(t *testing.T) {
			dir := t.TempDir()
			run := func(name string, record func(t *testing.T) (cpu, heap string)) {
				t.Run(name, func(t *testing.T) {
					cpu, heap := record(t)
					for _, kind := range []struct{ name, path string }{{"cpu", cpu}, {"heap", heap}} {
						if kind.path == "" {
							continue
						}
						row := &tally{release: version, variant: name, kind: kind.name}
						compareProfile(t, kind.path, row, minor)
						mu.Lock()
						rows = append(rows, row)
						mu.Unlock()
					}
				})
			}
			for _, v := range variants {
				if v.name == "pie" && minor < 6 {
					continue
				}
				run(v.name, func(t *testing.T) (string, string) {
					bin := buildProg(t, goroot, v, filepath.Join(dir, "prog."+v.name))
					cpu, heap := bin+".cpu.prof", bin+".heap.prof"
					if !hostrun.Native(v.goarch) {
						// qemu-user's 386 emulation fails on SIGPROF (package hostrun).
						t.Skipf("this kernel does not run linux/%s programs, and a CPU profile cannot be taken under qemu-user", v.goarch)
					}
					runCmd(t, exec.Command(bin, cpu, heap))
					return cpu, heap
				})
			}
			run("gofmt", func(t *testing.T) (string, string) {
				// gofmt -l over the release's own net and runtime
				// sources (the exit status is 2 if a test file of
				// them does not parse: the profile is written anyway).
				cpu := filepath.Join(dir, "gofmt.cpu.prof")
				cmd := exec.Command(filepath.Join(goroot, "bin", "gofmt"), "-cpuprofile", cpu, "-l",
					filepath.Join(goroot, "src", "net"), filepath.Join(goroot, "src", "runtime"))
				if out, err := cmd.CombinedOutput(); err != nil {
					if _, serr := os.Stat(cpu); serr != nil {
						t.Fatalf("gofmt -cpuprofile: %v\n%s", err, out)
					}
				}
				return cpu, ""
			})
		})
	}
	table := agreementTable(rows)
	t.Log("\n" + table)
	if out := os.Getenv("GOSYM_PPROF_AGREEMENT"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// compareProfile symbolizes a stripped copy of the profile at path from the
// binary of its main mapping and compares every location with the
// runtime's own symbolization.
func compareProfile(t *testing.T, path string, row *tally, minor int) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := profile.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(orig.Mapping) == 0 || orig.Mapping[0].File == "" {
		t.Fatalf("%s: no main mapping", path)
	}
	tab, err := gosym.Open(orig.Mapping[0].File)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	got := stripProfile(orig)
	if _, err := profiles.Symbolize(got, []*gosym.Table{tab}); err != nil {
		t.Fatal(err)
	}
	if err := got.CheckValid(); err != nil {
		t.Fatalf("symbolized profile: %v", err)
	}
	// The same with every wrapper frame kept, for releases whose
	// runtime/pprof keeps them.
	withWrappers := stripProfile(orig)
	if _, err := profiles.Symbolize(withWrappers, []*gosym.Table{tab}, profiles.WithWrappers()); err != nil {
		t.Fatal(err)
	}
	// A round trip through the encoder, as gosym pprof writes it.
	var buf bytes.Buffer
	if err := got.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if got, err = profile.Parse(&buf); err != nil {
		t.Fatal(err)
	}
	gotLoc := locationsByID(got)
	wrapLoc := locationsByID(withWrappers)
	byName := functionsByName(got, withWrappers)
	nextFrames := make(map[*profile.Location][][]frame)
	for _, sm := range orig.Sample {
		for k := 0; k+1 < len(sm.Location); k++ {
			var after []frame // the frames of the locations after k, up to 16
			for _, l := range sm.Location[k+1:] {
				if after = append(after, frames(l.Line)...); len(after) >= 16 {
					break
				}
			}
			nextFrames[sm.Location[k]] = append(nextFrames[sm.Location[k]], after)
		}
	}
	for _, loc := range orig.Location {
		row.locations++
		want := frames(loc.Line)
		g, ok := gotLoc[loc.ID]
		var have []frame
		if ok {
			have = frames(g.lines())
		}
		if q := classify(want, have, frames(wrapLoc[loc.ID].lines()), nextFrames[loc], byName, minor); q != "" {
			row.add(q, len(have)-len(want))
			if strings.HasPrefix(q, "DIFFERENT") && row.failures < 10 {
				row.failures++
				t.Errorf("%s location %d at %#x:\n runtime: %v\n ours:    %v", filepath.Base(path), loc.ID, loc.Address, want, have)
			}
			continue
		}
		row.equal++
	}
	if row.equal == 0 {
		t.Errorf("%s: no location equal", path)
	}
}

// A frame is one line of a location, as compared.
type frame struct {
	Function, File string
	Line, Start    int64
}

func (f frame) String() string {
	return fmt.Sprintf("%s %s:%d (start %d)", f.Function, filepath.Base(f.File), f.Line, f.Start)
}

func frames(lines []profile.Line) []frame {
	var out []frame
	for _, ln := range lines {
		f := frame{Line: ln.Line}
		if fn := ln.Function; fn != nil {
			f.Function, f.File, f.Start = fn.Name, fn.Filename, fn.StartLine
		}
		out = append(out, f)
	}
	return out
}

// Quirks: the differences that are the runtime's, each with the evidence
// that makes it so.
const (
	// runtime/pprof makes one Function per name (proto.go's b.funcs is
	// keyed by name), with the file and start line of the first frame it
	// met: a frame of another function of the same name (two closures,
	// a method of two instantiations) shows that one's file or start
	// line. Checked: the runtime's file and start line are those of
	// another frame of that name in the profile.
	quirkByName = "function keyed by name"
	// Releases whose runtime/pprof records only the physical frame of
	// a location: the runtime's frames are a suffix of ours; the frames
	// we add are counted.
	quirkNoInline = "inline frames added"
	// runtime/pprof put the outer frames of an inline stack in
	// locations of their own, at made-up PCs (Go 1.12 and 1.13 for
	// every inlined call; later releases for some CPU samples): the
	// runtime's frames are the first of ours, and in every sample the
	// locations after this one start with the rest of ours. Symbolize
	// keeps the innermost frame only where it can tell (the next
	// location exactly at the call site: see the package
	// documentation); this counts the others, and the frames added.
	quirkSplitInline = "inline stack split by the runtime"
	// Go 1.10 and 1.11 name no function for the frame of a wrapper
	// around an inlined method (function "", file "", line 0): ours
	// with wrappers kept are the same but for the wrapper's name.
	quirkNamelessWrapper = "runtime's nameless wrapper frame"
	// Releases whose runtime/pprof keeps wrapper frames (before Go 1.12):
	// the runtime's frames equal ours with wrappers kept (or differ as
	// quirkByName allows).
	quirkWrappers = "runtime keeps wrappers"
	// Addresses in no Go function (C code): the runtime has no name;
	// ours is the object's function symbol there (no file, no line),
	// or none.
	quirkNotGo = "not Go code"
)

// classify returns "" if want and have are equal, else the quirk that
// explains the difference, else a string starting with "DIFFERENT".
//
// next holds, for each of the runtime's samples in which a location
// follows this one, the frames of the locations after it.
func classify(want, have, withWrappers []frame, next [][]frame, byName map[string][]frame, minor int) string {
	switch equal, byNameOnly := sameFrames(want, have, byName); {
	case equal:
		return ""
	case byNameOnly:
		return quirkByName
	}
	if (len(have) == 0 || len(have) == 1 && have[0].File == "" && have[0].Line == 0) &&
		(len(want) == 0 || len(want) == 1 && want[0].Function == "") {
		return quirkNotGo
	}
	if equal, byNameOnly := sameFrames(want, withWrappers, byName); len(want) > 0 && minor < 12 && (equal || byNameOnly) {
		return quirkWrappers
	}
	if len(want) > 0 && len(want) < len(have) && slices.Equal(want, have[:len(want)]) && len(next) > 0 {
		rest := have[len(want):]
		split := true
		for _, n := range next {
			split = split && len(n) >= len(rest) && slices.Equal(n[:len(rest)], rest)
		}
		if split {
			return quirkSplitInline
		}
	}
	if len(want) > 0 && len(want) < len(have) && minor < 12 && slices.Equal(want, have[len(have)-len(want):]) {
		return quirkNoInline
	}
	if minor < 12 && len(want) == len(withWrappers) {
		nameless := 0
		for i := range want {
			switch {
			case want[i] == withWrappers[i]:
			case want[i].Function == "" && want[i].Line == 0 && withWrappers[i].Function != "":
				nameless++
			default:
				return "DIFFERENT"
			}
		}
		if nameless > 0 {
			return quirkNamelessWrapper
		}
	}
	return "DIFFERENT"
}

// sameFrames reports whether want and have are equal, or equal but for
// files and start lines that are those of another function of the same
// name (byName).
func sameFrames(want, have []frame, byName map[string][]frame) (equal, byNameOnly bool) {
	if slices.Equal(want, have) {
		return true, false
	}
	if len(want) != len(have) {
		return false, false
	}
	for i, w := range want {
		h := have[i]
		if w != h && (w.Function != h.Function || w.Line != h.Line ||
			!slices.Contains(byName[w.Function], frame{Function: w.Function, File: w.File, Start: w.Start})) {
			return false, false
		}
	}
	return false, true
}

// functionsByName returns the functions of p by name: for the
// symbolized profile, the evidence that a runtime frame's file and start
// line are those of another function of its name.
func functionsByName(ps ...*profile.Profile) map[string][]frame {
	m := make(map[string][]frame)
	for _, p := range ps {
		for _, f := range p.Function {
			m[f.Name] = append(m[f.Name], frame{Function: f.Name, File: f.Filename, Start: f.StartLine})
		}
	}
	return m
}

type locLines struct{ l *profile.Location }

func (l locLines) lines() []profile.Line {
	if l.l == nil {
		return nil
	}
	return l.l.Line
}

func locationsByID(p *profile.Profile) map[uint64]locLines {
	m := make(map[uint64]locLines, len(p.Location))
	for _, l := range p.Location {
		m[l.ID] = locLines{l}
	}
	return m
}

// stripProfile returns a copy of p with addresses and mappings only, as a
// profiler that does not symbolize sends it.
func stripProfile(p *profile.Profile) *profile.Profile {
	q := p.Copy()
	for _, l := range q.Location {
		l.Line = nil
	}
	q.Function = nil
	for _, m := range q.Mapping {
		m.HasFunctions, m.HasFilenames, m.HasLineNumbers, m.HasInlineFrames = false, false, false, false
	}
	return q
}

// tally counts the comparison of one profile.
type tally struct {
	release, variant, kind string
	locations, equal       int
	quirks                 map[string]int
	added                  map[string]int // inline frames added, by quirk
	failures               int
}

func (r *tally) add(q string, added int) {
	if r.quirks == nil {
		r.quirks, r.added = make(map[string]int), make(map[string]int)
	}
	r.quirks[q]++
	if q == quirkNoInline || q == quirkSplitInline {
		r.added[q] += added
	}
}

// agreementTable formats the rows, one per release and variant, and a
// total.
func agreementTable(rows []*tally) string {
	var b strings.Builder
	b.WriteString("| Go | binary | profile | locations | equal | quirks |\n|---|---|---|---:|---:|---|\n")
	var total, equal, different int
	for _, r := range rows {
		var qs []string
		for q, n := range r.quirks {
			if strings.HasPrefix(q, "DIFFERENT") {
				different += n
			}
			s := fmt.Sprintf("%d %s", n, q)
			if a := r.added[q]; a > 0 {
				s += fmt.Sprintf(" (%d frames)", a)
			}
			qs = append(qs, s)
		}
		sort.Strings(qs)
		total += r.locations
		equal += r.equal
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s |\n", r.release, r.variant, r.kind, r.locations, r.equal, strings.Join(qs, ", "))
	}
	if total > 0 {
		fmt.Fprintf(&b, "\n%d locations, %d equal (%.3f%%), %d different; the rest are the quirks above.\n",
			total, equal, 100*float64(equal)/float64(total), different)
	}
	return b.String()
}

// goVersion returns the release of the toolchain at goroot.
func goVersion(t *testing.T, goroot string) string {
	data, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(strings.SplitN(string(data), "\n", 2)[0])
}

// buildProg builds testdata/prog with the toolchain at goroot, in GOPATH
// mode (every release from 1.10 builds it so), and returns the binary.
func buildProg(t *testing.T, goroot string, v variant, out string) string {
	src, err := filepath.Abs(filepath.Join("testdata", "prog"))
	if err != nil {
		t.Fatal(err)
	}
	cache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"build", "-o", out}, v.flags...)
	cmd := exec.Command(filepath.Join(goroot, "bin", "go"), append(args, ".")...)
	cmd.Dir = src
	cmd.Env = append([]string{
		"PATH=" + filepath.Join(goroot, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"GOROOT=" + goroot,
		"GOPATH=" + filepath.Join(t.TempDir(), "gopath"),
		"GOCACHE=" + strings.TrimSpace(string(cache)),
		"GOENV=off", "GOFLAGS=", "GOTOOLCHAIN=local", "GOPROXY=off", "GO111MODULE=off",
		"GOOS=linux", "GOARCH=" + v.goarch,
	}, v.env...)
	runCmd(t, cmd)
	return out
}

func runCmd(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); errors.Is(err, syscall.ENOEXEC) {
		// A kernel without 32-bit support (no IA32 emulation) refuses
		// linux/386 binaries; qemu-user is no way out: its signals break
		// CPU profiling ("fatal: bad g in signal handler").
		t.Skipf("%s: %v: this kernel does not run the binary", cmd.Path, err)
	} else if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.Bytes())
	}
}
