package gosym

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/oracle"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// compareStdlib checks the function list and, at every DWARF boundary (or
// every PC without DWARF), the innermost position and the physical function
// against debug/gosym.
func compareStdlib(t *testing.T, tab *Table, st *oracle.Stdlib, pcs []uint64) *agreement {
	var a agreement
	want := st.Funcs()
	i := 0
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		if i >= len(want) {
			t.Fatalf("more functions than debug/gosym's %d", len(want))
		}
		w := want[i]
		a.addFunc(f.Name() == w.Name && f.Entry() == w.Low && f.End() == w.High,
			"function %d: %s [%#x,%#x), debug/gosym %s [%#x,%#x)", i, f.Name(), f.Entry(), f.End(), w.Name, w.Low, w.High)
		i++
	}
	if i != len(want) {
		t.Errorf("%d functions, debug/gosym %d", i, len(want))
	}
	if pcs == nil {
		// No DWARF to say where positions change: every PC.
		for _, w := range want {
			for pc := w.Low; pc < w.High; pc++ {
				pcs = append(pcs, pc)
			}
		}
	}
	var locs []Location
	var err error
	for _, pc := range pcs {
		file, line, fn := st.PCToLine(pc)
		locs, err = tab.ResolveLocations(pc, locs)
		if fn == "" {
			a.add(err != nil, "pc %#x: in no function for debug/gosym, ours %v", pc, locs)
			continue
		}
		if err != nil {
			a.add(false, "pc %#x: %v; debug/gosym %s %s:%d", pc, err, fn, file, line)
			continue
		}
		in, out := locs[0], locs[len(locs)-1]
		if line <= 0 && file == "" {
			// debug/gosym reports -1 and "" where the tables end.
			line = 0
		}
		f, _ := tab.ResolveFunction(pc)
		if f.field(tab.layout.pcln) == 0 {
			// No line table (go:buildid in Plan 9 binaries): the
			// runtime reports none; debug/gosym decodes the bytes at
			// offset 0 of the pc-value tables.
			if in.File == "" && in.Line == 0 && file+":"+strconv.Itoa(line) != ":0" {
				a.addKnown(causeNoLineTable, "pc %#x in %s: debug/gosym %s:%d", pc, fn, file, line)
			} else {
				a.add(in.File == "" && in.Line == 0, "pc %#x: ours %s:%d for a function without line table", pc, in.File, in.Line)
			}
			continue
		}
		if file == "" && tab.isLastFile(in.File) && out.Function == fn && int(in.Line) == line {
			// debug/gosym misses the last file of 1.2–1.7 tables.
			a.addKnown(causeLastFile, "pc %#x in %s: ours %s:%d, debug/gosym no file", pc, fn, in.File, in.Line)
			continue
		}
		a.add(out.Function == fn && in.File == file && int(in.Line) == line,
			"pc %#x: ours %s %s:%d, debug/gosym %s %s:%d", pc, out.Function, in.File, in.Line, fn, file, line)
	}
	return &a
}

// compareDWARF checks the inline stack at every DWARF boundary inside a Go
// function. Where DWARF cannot say more, the check is partial and the
// difference counted under its known cause (TESTING.md):
//
//   - Before Go 1.11 DWARF has no inlined subroutines, and 1.11 leaves out
//     levels of nested inlining (where its runtime agrees with us): only the
//     innermost position and the physical function can be compared.
//   - DWARF records no inlining into compiler-generated wrappers (checked
//     against the runtime's innermost frames of 1.16–1.19): only the
//     position and the wrapper can be compared.
//   - Where DWARF's line row names another position than the pclntab, and
//     debug/gosym, reading the pclntab on its own, agrees with us, the
//     difference is DWARF's (a few PCs per binary in some releases).
//
// DWARF has no row at some boundaries (padding, inline marks, the first
// instructions of some compiler-generated functions): nothing is compared
// there.
func compareDWARF(t *testing.T, tab *Table, d *oracle.DWARF, st *oracle.Stdlib, minor int) *agreement {
	var a agreement
	var locs []Location
	var frames []oracle.Frame
	bounds := d.Boundaries()
	for _, pc := range bounds[:max(len(bounds)-1, 0)] {
		f, err := tab.ResolveFunction(pc)
		if err != nil {
			continue // not Go code (C code of a cgo binary)
		}
		var ok bool
		frames, ok = d.Frames(pc, frames)
		if !ok {
			continue // DWARF has no row here: no answer to compare
		}
		locs, err = f.ResolveLocations(pc, locs)
		if err != nil {
			t.Fatalf("pc %#x: %v", pc, err)
		}
		same := len(locs) == len(frames)
		for i := 0; same && i < len(locs); i++ {
			same = oracle.NormalizeName(locs[i].Function) == oracle.NormalizeName(frames[i].Function) &&
				locs[i].File == frames[i].File && int(locs[i].Line) == frames[i].Line
		}
		if same {
			a.add(true, "")
			continue
		}
		in, out := locs[0], locs[len(locs)-1]
		samePos := in.File == frames[0].File && int(in.Line) == frames[0].Line
		sameOuter := oracle.NormalizeName(out.Function) == oracle.NormalizeName(frames[len(frames)-1].Function)
		const msg = "pc %#x: ours %v, DWARF %v"
		switch {
		case samePos && sameOuter && minor <= 10:
			a.addKnown(causeDWARFNoInline, msg, pc, locs, frames)
		case samePos && sameOuter && minor == 11:
			a.addKnown(causeDWARFNested, msg, pc, locs, frames)
		case samePos && sameOuter && len(locs) > 1 && out.Wrapper && len(frames) == 1:
			a.addKnown(causeDWARFWrapper, msg, pc, locs, frames)
		case !samePos && int(in.Line) == frames[0].Line && strings.Contains(in.File, "/_obj/") &&
			strings.HasSuffix(frames[0].File, in.File[strings.Index(in.File, "/_obj/"):]) && stdlibAgrees(tab, st, pc, in, out):
			a.addKnown(causeDWARFCgoPath, msg, pc, locs, frames)
		case !samePos && minor == 14 && frames[0].Line == 1 && stdlibAgrees(tab, st, pc, in, out):
			a.addKnown(causeDWARFLine1, msg, pc, locs, frames)
		case !samePos && stdlibAgrees(tab, st, pc, in, out):
			a.addKnown(causeDWARFRow, msg, pc, locs, frames)
		default:
			a.add(false, msg, pc, locs, frames)
		}
	}
	return &a
}

// stdlibAgrees tells whether debug/gosym reports the physical function out
// and the innermost position in at pc (its last-file deviation allowed
// for).
func stdlibAgrees(tab *Table, st *oracle.Stdlib, pc uint64, in, out Location) bool {
	file, line, fn := st.PCToLine(pc)
	if fn != out.Function || line != int(in.Line) {
		return false
	}
	return file == in.File || file == "" && tab.isLastFile(in.File)
}

// isLastFile tells whether name is the file debug/gosym misses in Go
// 1.2–1.7 tables: the last one, whose index is the file count (FORMAT.md, "Old file table").
func (tab *Table) isLastFile(name string) bool {
	if tab.layout.minor >= 8 || tab.hdr.magic != magic12 {
		return false
	}
	n, _ := tab.hdr.rd.u32At(tab.hdr.filetab, 0)
	return name == tab.globalFile(int32(n))
}

// oracleCheck compares one binary with every oracle that applies and
// reports the agreement; it fails the test below the given agreement.
func oracleCheck(t *testing.T, name string, bin []byte, minor int, hasDWARF bool) {
	obj, err := object.NewBytes(bin)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := NewTable(obj)
	if err != nil {
		t.Fatalf("NewTable: %v", err)
	}
	std, err := oracle.NewStdlibPclntab(bin)
	if err != nil {
		t.Fatalf("debug/gosym: %v", err)
	}
	var pcs []uint64
	var dw *agreement
	if hasDWARF {
		d, err := oracle.NewDWARF(bin)
		if err != nil {
			t.Fatalf("DWARF oracle: %v", err)
		}
		dw = compareDWARF(t, tab, d, std, minor)
		pcs = d.Boundaries()
	}
	st := compareStdlib(t, tab, std, pcs)
	st.report(t, "debug/gosym")
	if dw != nil {
		dw.report(t, "DWARF")
	}
}

// crossTargets are builds of the corpus program by the installed
// toolchain: every object format, both byte orders, both pointer sizes,
// each pc quantum, and the link modes that move the text.
var crossTargets = []struct {
	name, goos, goarch string
	flags              []string
	cgo                bool
}{
	{"linux-386", "linux", "386", nil, false},
	{"linux-arm", "linux", "arm", nil, false},
	{"linux-arm64", "linux", "arm64", nil, false},
	{"linux-ppc64", "linux", "ppc64", nil, false},
	{"linux-s390x", "linux", "s390x", nil, false},
	{"linux-riscv64", "linux", "riscv64", nil, false},
	{"linux-mips", "linux", "mips", nil, false},
	{"darwin-amd64", "darwin", "amd64", nil, false},
	{"darwin-arm64", "darwin", "arm64", nil, false},
	{"windows-amd64", "windows", "amd64", nil, false},
	{"windows-386", "windows", "386", nil, false},
	{"plan9-amd64", "plan9", "amd64", nil, false},
	{"plan9-386", "plan9", "386", nil, false},
	{"linux-amd64-pie", "linux", "amd64", []string{"-buildmode=pie"}, false},
	{"linux-amd64-trimpath", "linux", "amd64", []string{"-trimpath"}, false},
	{"linux-amd64-cgo-extlink", "linux", "amd64", []string{"-tags=gosymcgo", "-ldflags=-linkmode=external"}, true},
}

var crossBuilds sync.Map // name -> *crossBuild

type crossBuild struct {
	once sync.Once
	bin  []byte
	err  error
}

// buildCorpusProgram builds the corpus test program with the installed
// toolchain, once per test process.
func buildCorpusProgram(t *testing.T, name, goos, goarch string, flags []string, cgo bool) []byte {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	if cgo {
		if _, err := exec.LookPath("gcc"); err != nil {
			t.Skip("no gcc for a cgo build")
		}
	}
	v, _ := crossBuilds.LoadOrStore(name, new(crossBuild))
	b := v.(*crossBuild)
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "gosym-cross-")
		if err != nil {
			b.err = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "prog")
		cmd := exec.Command(goCmd, append(append([]string{"build", "-o", out}, flags...), "gosymtest")...)
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "GO111MODULE=off",
			"GOPATH="+filepath.Join(testcorpus.Dir(), "..", "src", "gopath"),
			"GOFLAGS=", "GOTOOLCHAIN=local", "CGO_ENABLED="+map[bool]string{true: "1", false: "0"}[cgo])
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build for %s: %v\n%s", name, err, msg)
			return
		}
		b.bin, b.err = os.ReadFile(out)
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// TestCrossBuildOracles builds the corpus program for every object format
// and architecture family with the installed toolchain and compares the
// Table with DWARF (where the format has it) and debug/gosym.
func TestCrossBuildOracles(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	minor := parseMinor(runtimeVersion())
	for _, c := range crossTargets {
		t.Run(c.name, func(t *testing.T) {
			bin := buildCorpusProgram(t, c.name, c.goos, c.goarch, c.flags, c.cgo)
			oracleCheck(t, c.name, bin, minor, c.goos != "plan9")
			obj, err := object.NewBytes(bin)
			if err != nil {
				t.Fatal(err)
			}
			tab, err := NewTable(obj)
			if err != nil {
				t.Fatal(err)
			}
			if tab.GoVersion() != runtimeVersion() {
				t.Errorf("GoVersion = %q, want %q", tab.GoVersion(), runtimeVersion())
			}
		})
	}
}
