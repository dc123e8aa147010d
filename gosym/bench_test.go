package gosym

import (
	"debug/elf"
	stdgosym "debug/gosym"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// The benchmarks run on two large real binaries of the installed
// toolchain, each next to the nearest work debug/gosym can do, so that one
// run gives both sides (see BENCHMARKS.md). Besides ns/op (wall clock),
// each reports cpu-ns/op, the CPU time of the benchmark's thread per
// operation, which a busy machine disturbs much less. Sub-benchmarks are
// named bin=.../set=.../impl=gosym|stdlib, so that
//
//	benchstat -col '/impl@(stdlib gosym)' results.txt
//
// sets the two implementations side by side.

var benchBinaries = struct {
	once  sync.Once
	paths map[string]string
}{}

// benchBinary returns the path of a benchmark binary: "go" and "compile"
// of the installed toolchain, or "hello", a hello-world program built
// with it.
func benchBinary(b testing.TB, name string) string {
	benchBinaries.once.Do(func() {
		benchBinaries.paths = map[string]string{}
		out, err := exec.Command("go", "env", "GOROOT", "GOTOOLDIR", "GOVERSION").Output()
		if err != nil {
			return
		}
		f := strings.Fields(string(out))
		if len(f) != 3 {
			return
		}
		benchBinaries.paths["go"] = filepath.Join(f[0], "bin", "go")
		benchBinaries.paths["compile"] = filepath.Join(f[1], "compile")
		if p, err := buildHello(f[2]); err == nil {
			benchBinaries.paths["hello"] = p
		}
	})
	p := benchBinaries.paths[name]
	if _, err := os.Stat(p); err != nil {
		b.Skipf("no %s binary: %v", name, err)
	}
	return p
}

// buildHello returns a hello-world program built by the installed
// toolchain, release version, building it the first time.
func buildHello(version string) (string, error) {
	dir := filepath.Join(os.TempDir(), "gosym-hello-"+version)
	bin := filepath.Join(dir, "hello")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	// Build in a directory of our own, then move it into place.
	tmp, err := os.MkdirTemp("", "gosym-hello")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	src := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello, world\") }\n"
	if err := os.WriteFile(filepath.Join(tmp, "main.go"), []byte(src), 0o666); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte("module hello\n"), 0o666); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", "hello", ".")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, err := os.Stat(bin); err != nil {
			return "", err
		}
	}
	return bin, nil
}

var benchNames = []string{"go", "compile"}

// cpuTimer measures the CPU time of the benchmark's thread, to report it
// as cpu-ns/op next to ns/op.
type cpuTimer struct {
	b     *testing.B
	start int64
	ok    bool
}

// startCPU starts a cpuTimer and turns on allocation reporting. Call it
// just before the b.Loop loop.
func startCPU(b *testing.B) cpuTimer {
	b.ReportAllocs()
	runtime.LockOSThread()
	start, ok := threadCPUTime()
	return cpuTimer{b, start, ok}
}

// stop reports cpu-ns/op. Call it just after the b.Loop loop.
func (c cpuTimer) stop() {
	end, ok := threadCPUTime()
	runtime.UnlockOSThread()
	if c.ok && ok && c.b.N > 0 {
		c.b.ReportMetric(float64(end-c.start)/float64(c.b.N), "cpu-ns/op")
	}
}

// stdlibTable opens path the way cmd/internal/objfile feeds debug/gosym.
func stdlibTable(b testing.TB, path string) *stdgosym.Table {
	f, err := elf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	pcln, err := f.Section(".gopclntab").Data()
	if err != nil {
		b.Fatal(err)
	}
	text := f.Section(".text").Addr
	if syms, err := f.Symbols(); err == nil {
		for _, s := range syms {
			if s.Name == "runtime.text" {
				text = s.Value
			}
		}
	}
	var symtab []byte
	if s := f.Section(".gosymtab"); s != nil {
		symtab, _ = s.Data()
	}
	t, err := stdgosym.NewTable(symtab, stdgosym.NewLineTable(pcln, text))
	if err != nil {
		b.Fatal(err)
	}
	return t
}

// benchSet is the PCs of a benchmark: a warm working set of 4096 PCs drawn
// from a fixed seed, and a cold set with one PC in every function.
type benchSet struct {
	tab         *Table
	std         *stdgosym.Table
	warm, cold  []uint64
	fns         []Function
	lookupNames []string // the names of fns, in a fixed pseudo-random order
}

var benchSets sync.Map // name -> *benchSet

func loadBenchSet(b *testing.B, name string) *benchSet {
	if v, ok := benchSets.Load(name); ok {
		return v.(*benchSet)
	}
	path := benchBinary(b, name)
	tab, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	s := &benchSet{tab: tab, std: stdlibTable(b, path)}
	r := rand.New(rand.NewPCG(5, 6))
	for f, err := range tab.Functions() {
		if err != nil {
			b.Fatal(err)
		}
		if f.End() > f.Entry() {
			s.fns = append(s.fns, f)
			s.cold = append(s.cold, f.Entry()+r.Uint64N(f.End()-f.Entry()))
		}
	}
	for i := range s.fns {
		s.lookupNames = append(s.lookupNames, s.fns[i*7919%len(s.fns)].Name())
	}
	for range 4096 {
		f := s.fns[r.IntN(len(s.fns))]
		s.warm = append(s.warm, f.Entry()+r.Uint64N(f.End()-f.Entry()))
	}
	benchSets.Store(name, s)
	return s
}

// BenchmarkOpen opens the binary and reads its table headers; the stdlib
// side reads .gopclntab and decodes every function, as debug/gosym must.
// hello, a hello-world program, shows that the allocations do not grow
// with the binary.
func BenchmarkOpen(b *testing.B) {
	for _, name := range append(benchNames, "hello") {
		b.Run("bin="+name+"/impl=gosym", func(b *testing.B) {
			path := benchBinary(b, name)
			c := startCPU(b)
			for b.Loop() {
				tab, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				tab.Close()
			}
			c.stop()
		})
		b.Run("bin="+name+"/impl=stdlib", func(b *testing.B) {
			path := benchBinary(b, name)
			c := startCPU(b)
			for b.Loop() {
				stdlibTable(b, path)
			}
			c.stop()
		})
	}
}

// The per-PC benchmarks cycle through a set of PCs, reporting the time per
// PC: warm, 4096 PCs in random functions, and cold, one PC in every
// function in address order. Both measure the steady state: passes over
// the set run before the timing starts (as for Lines and InlineFunctions).
// ResolveLocations/set=first measures instead the first lookup in each
// function: the cold set on a fresh Table for each pass (Open included).

func BenchmarkResolveFunction(b *testing.B) {
	for _, name := range benchNames {
		for _, set := range []string{"warm", "cold"} {
			b.Run("bin="+name+"/set="+set+"/impl=gosym", func(b *testing.B) {
				s := loadBenchSet(b, name)
				pcs := s.pcs(set)
				for _, pc := range pcs {
					s.tab.ResolveFunction(pc)
				}
				c := startCPU(b)
				i := 0
				for b.Loop() {
					if _, err := s.tab.ResolveFunction(pcs[i]); err != nil {
						b.Fatal(err)
					}
					if i++; i == len(pcs) {
						i = 0
					}
				}
				c.stop()
			})
			b.Run("bin="+name+"/set="+set+"/impl=stdlib", func(b *testing.B) {
				s := loadBenchSet(b, name)
				pcs := s.pcs(set)
				c := startCPU(b)
				i := 0
				for b.Loop() {
					if s.std.PCToFunc(pcs[i]) == nil {
						b.Fatal("no func")
					}
					if i++; i == len(pcs) {
						i = 0
					}
				}
				c.stop()
			})
		}
	}
}

func BenchmarkResolveLocations(b *testing.B) {
	for _, name := range benchNames {
		for _, set := range []string{"warm", "cold"} {
			b.Run("bin="+name+"/set="+set+"/impl=gosym", func(b *testing.B) {
				s := loadBenchSet(b, name)
				pcs := s.pcs(set)
				locs := make([]Location, 0, 32)
				for range 2 { // the line cache takes a function on its second lookup
					for _, pc := range pcs {
						locs, _ = s.tab.ResolveLocations(pc, locs)
					}
				}
				c := startCPU(b)
				i := 0
				for b.Loop() {
					var err error
					if locs, err = s.tab.ResolveLocations(pcs[i], locs); err != nil {
						b.Fatal(err)
					}
					if i++; i == len(pcs) {
						i = 0
					}
				}
				c.stop()
			})
			b.Run("bin="+name+"/set="+set+"/impl=stdlib", func(b *testing.B) {
				s := loadBenchSet(b, name)
				pcs := s.pcs(set)
				c := startCPU(b)
				i := 0
				for b.Loop() {
					if _, _, fn := s.std.PCToLine(pcs[i]); fn == nil {
						b.Fatal("no func")
					}
					if i++; i == len(pcs) {
						i = 0
					}
				}
				c.stop()
			})
		}
		b.Run("bin="+name+"/set=first/impl=gosym", func(b *testing.B) {
			s := loadBenchSet(b, name)
			path := benchBinary(b, name)
			pcs := s.cold
			locs := make([]Location, 0, 32)
			var tab *Table
			c := startCPU(b)
			i := 0
			for b.Loop() {
				if i == 0 {
					if tab != nil {
						tab.Close()
					}
					var err error
					if tab, err = Open(path); err != nil {
						b.Fatal(err)
					}
				}
				var err error
				if locs, err = tab.ResolveLocations(pcs[i], locs); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(pcs) {
					i = 0
				}
			}
			c.stop()
			tab.Close()
		})
	}
}

// BenchmarkLines decodes every function; ns/op is per function, and the
// pcs/op metric says how many PCs that covers. The stdlib side sweeps
// PCToLine over every PC of the same functions, so the ratio of the two
// is also the ratio per PC.
func BenchmarkLines(b *testing.B) {
	for _, name := range benchNames {
		b.Run("bin="+name+"/impl=gosym", func(b *testing.B) {
			s := loadBenchSet(b, name)
			var lr []FunctionLine
			for _, f := range s.fns {
				lr, _ = f.Lines(lr)
			}
			c := startCPU(b)
			i := 0
			for b.Loop() {
				var err error
				if lr, err = s.fns[i].Lines(lr); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(s.fns) {
					i = 0
				}
			}
			c.stop()
			b.ReportMetric(s.avgSize(), "pcs/op")
		})
		b.Run("bin="+name+"/impl=stdlib", func(b *testing.B) {
			s := loadBenchSet(b, name)
			c := startCPU(b)
			i := 0
			for b.Loop() {
				f := s.fns[i]
				for pc := f.Entry(); pc < f.End(); pc++ {
					s.std.PCToLine(pc)
				}
				if i++; i == len(s.fns) {
					i = 0
				}
			}
			c.stop()
			b.ReportMetric(s.avgSize(), "pcs/op")
		})
	}
}

// BenchmarkInlineFunctions lists what was inlined into every function in
// turn; debug/gosym has no counterpart.
func BenchmarkInlineFunctions(b *testing.B) {
	for _, name := range benchNames {
		b.Run("bin="+name+"/impl=gosym", func(b *testing.B) {
			s := loadBenchSet(b, name)
			var buf []InlineFunction
			for _, f := range s.fns {
				buf, _ = f.InlineFunctions(buf)
			}
			c := startCPU(b)
			i := 0
			for b.Loop() {
				var err error
				if buf, err = s.fns[i].InlineFunctions(buf); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(s.fns) {
					i = 0
				}
			}
			c.stop()
		})
	}
}

// BenchmarkLookupFunction looks up every function by name, in a fixed
// pseudo-random order. The first lookup of a Table sorts the names; that
// is left out of the timing.
func BenchmarkLookupFunction(b *testing.B) {
	for _, name := range benchNames {
		b.Run("bin="+name+"/impl=gosym", func(b *testing.B) {
			s := loadBenchSet(b, name)
			names := s.lookupNames
			s.tab.LookupFunction(names[0])
			c := startCPU(b)
			i := 0
			for b.Loop() {
				if _, err := s.tab.LookupFunction(names[i]); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(names) {
					i = 0
				}
			}
			c.stop()
		})
		b.Run("bin="+name+"/impl=stdlib", func(b *testing.B) {
			s := loadBenchSet(b, name)
			names := s.lookupNames
			c := startCPU(b)
			i := 0
			for b.Loop() {
				if s.std.LookupFunc(names[i]) == nil {
					b.Fatal("not found")
				}
				if i++; i == len(names) {
					i = 0
				}
			}
			c.stop()
		})
	}
}

func (s *benchSet) pcs(set string) []uint64 {
	if set == "warm" {
		return s.warm
	}
	return s.cold
}

func (s *benchSet) avgSize() float64 {
	n := uint64(0)
	for _, f := range s.fns {
		n += f.End() - f.Entry()
	}
	return float64(n) / float64(len(s.fns))
}

// linePCQueries returns up to n (file, line) pairs spread over the line
// index of s.tab, each with a suffix of the file name after a '/' as a
// user would type it.
func linePCQueries(b *testing.B, s *benchSet, n int) (files []string, lines []uint32) {
	all := indexedLines(b, s.tab)
	step := max(len(all)/n, 1)
	for k := 0; k < len(all); k += step {
		files = append(files, all[k].file)
		lines = append(lines, all[k].line)
	}
	return files, lines
}

// BenchmarkLinePCs finds the PCs of a file:line: the first query of a
// Table (which lists the files of every function and decodes the lines of
// one file; BenchmarkFirstLinePCs opens the binary too), later queries,
// the scan over every function's lines a user would write without
// LinePCs, and debug/gosym's LineToPC (one PC, no inlined copies).
func BenchmarkLinePCs(b *testing.B) {
	for _, name := range benchNames {
		b.Run("bin="+name+"/impl=gosym/query=first", func(b *testing.B) {
			s := loadBenchSet(b, name)
			files, lines := linePCQueries(b, s, 1)
			c := startCPU(b)
			for b.Loop() {
				tab, err := NewTable(s.tab.Object())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tab.LinePCs(files[0], lines[0], nil); err != nil {
					b.Fatal(err)
				}
			}
			c.stop()
		})
		b.Run("bin="+name+"/impl=gosym/query=warm", func(b *testing.B) {
			s := loadBenchSet(b, name)
			files, lines := linePCQueries(b, s, 1000)
			var buf []LinePC
			c := startCPU(b)
			i := 0
			for b.Loop() {
				var err error
				if buf, err = s.tab.LinePCs(files[i], lines[i], buf); err != nil || len(buf) == 0 {
					b.Fatal(files[i], lines[i], err)
				}
				if i++; i == len(files) {
					i = 0
				}
			}
			c.stop()
		})
		b.Run("bin="+name+"/impl=scan", func(b *testing.B) {
			s := loadBenchSet(b, name)
			files, lines := linePCQueries(b, s, 1000)
			var lr []FunctionLine
			var pcs []uint64
			c := startCPU(b)
			i := 0
			for b.Loop() {
				pcs = pcs[:0]
				for _, f := range s.fns {
					lr, _ = f.Lines(lr)
					for _, l := range lr {
						if l.Line == lines[i] && l.File == files[i] {
							pcs = append(pcs, l.PCLo)
						}
					}
				}
				if len(pcs) == 0 {
					b.Fatal("not found")
				}
				if i++; i == len(files) {
					i = 0
				}
			}
			c.stop()
		})
		b.Run("bin="+name+"/impl=stdlib", func(b *testing.B) {
			s := loadBenchSet(b, name)
			files, lines := linePCQueries(b, s, 1000)
			c := startCPU(b)
			i := 0
			for b.Loop() {
				s.std.LineToPC(files[i], int(lines[i]))
				if i++; i == len(files) {
					i = 0
				}
			}
			c.stop()
		})
	}
}
