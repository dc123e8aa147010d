package gosym

import (
	"debug/elf"
	stdgosym "debug/gosym"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gosym-dev/gosym/object"
)

// The benchmarks run on two large real binaries of the installed
// toolchain, each next to the nearest work debug/gosym can do, so that one
// run gives both sides (see BENCHMARKS.md).

var benchBinaries = struct {
	once  sync.Once
	paths map[string]string
}{}

func benchBinary(b *testing.B, name string) string {
	benchBinaries.once.Do(func() {
		benchBinaries.paths = map[string]string{}
		out, err := exec.Command("go", "env", "GOROOT", "GOTOOLDIR").Output()
		if err != nil {
			return
		}
		f := strings.Fields(string(out))
		if len(f) == 2 {
			benchBinaries.paths["go"] = filepath.Join(f[0], "bin", "go")
			benchBinaries.paths["compile"] = filepath.Join(f[1], "compile")
		}
	})
	p := benchBinaries.paths[name]
	if _, err := os.Stat(p); err != nil {
		b.Skipf("no %s binary: %v", name, err)
	}
	return p
}

var benchNames = []string{"go", "compile"}

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
	tab       *Table
	std       *stdgosym.Table
	warm, cold []uint64
	fns        []Function
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
	for range 4096 {
		f := s.fns[r.IntN(len(s.fns))]
		s.warm = append(s.warm, f.Entry()+r.Uint64N(f.End()-f.Entry()))
	}
	benchSets.Store(name, s)
	return s
}

func BenchmarkOpen(b *testing.B) {
	for _, name := range benchNames {
		path := benchBinary(b, name)
		b.Run(name+"/gosym", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f, err := object.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := NewTable(f); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
		b.Run(name+"/stdlib", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				stdlibTable(b, path)
			}
		})
	}
}

// perPC runs fn over the PCs of a set, reporting the time per PC.
func perPC(b *testing.B, pcs []uint64, fn func(pc uint64)) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		fn(pcs[i])
		if i++; i == len(pcs) {
			i = 0
		}
	}
}

func BenchmarkResolveFunction(b *testing.B) {
	for _, name := range benchNames {
		for _, set := range []string{"warm", "cold"} {
			b.Run(name+"/"+set+"/gosym", func(b *testing.B) {
				s := loadBenchSet(b, name)
				perPC(b, s.pcs(set), func(pc uint64) {
					if _, err := s.tab.ResolveFunction(pc); err != nil {
						b.Fatal(err)
					}
				})
			})
			b.Run(name+"/"+set+"/stdlib", func(b *testing.B) {
				s := loadBenchSet(b, name)
				perPC(b, s.pcs(set), func(pc uint64) {
					if s.std.PCToFunc(pc) == nil {
						b.Fatal("no func")
					}
				})
			})
		}
	}
}

func BenchmarkResolveLocations(b *testing.B) {
	for _, name := range benchNames {
		for _, set := range []string{"warm", "cold"} {
			b.Run(name+"/"+set+"/gosym", func(b *testing.B) {
				s := loadBenchSet(b, name)
				locs := make([]Location, 0, 32)
				perPC(b, s.pcs(set), func(pc uint64) {
					var err error
					if locs, err = s.tab.ResolveLocations(pc, locs); err != nil {
						b.Fatal(err)
					}
				})
			})
			b.Run(name+"/"+set+"/stdlib", func(b *testing.B) {
				s := loadBenchSet(b, name)
				perPC(b, s.pcs(set), func(pc uint64) {
					if _, _, fn := s.std.PCToLine(pc); fn == nil {
						b.Fatal("no func")
					}
				})
			})
		}
	}
}

// BenchmarkLines decodes every function; ns/op is per function, and the
// pcs/op metric says how many PCs that covers. The stdlib side sweeps
// PCToLine over every PC of the same functions.
func BenchmarkLines(b *testing.B) {
	for _, name := range benchNames {
		b.Run(name+"/gosym", func(b *testing.B) {
			s := loadBenchSet(b, name)
			var lr LinesResult
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if lr, err = s.fns[i].Lines(lr); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(s.fns) {
					i = 0
				}
			}
			b.ReportMetric(s.avgSize(), "pcs/op")
		})
		b.Run(name+"/stdlib-sweep", func(b *testing.B) {
			s := loadBenchSet(b, name)
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				f := s.fns[i]
				for pc := f.Entry(); pc < f.End(); pc++ {
					s.std.PCToLine(pc)
				}
				if i++; i == len(s.fns) {
					i = 0
				}
			}
			b.ReportMetric(s.avgSize(), "pcs/op")
		})
	}
}

func BenchmarkInlineFunctions(b *testing.B) {
	for _, name := range benchNames {
		b.Run(name, func(b *testing.B) {
			s := loadBenchSet(b, name)
			var buf []InlineFunction
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = s.fns[i].InlineFunctions(buf); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(s.fns) {
					i = 0
				}
			}
		})
	}
}

func BenchmarkLookupFunction(b *testing.B) {
	for _, name := range benchNames {
		b.Run(name+"/gosym", func(b *testing.B) {
			s := loadBenchSet(b, name)
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.tab.LookupFunction(s.fns[i].Name()); err != nil {
					b.Fatal(err)
				}
				i = (i + 7919) % len(s.fns)
			}
		})
		b.Run(name+"/stdlib", func(b *testing.B) {
			s := loadBenchSet(b, name)
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if s.std.LookupFunc(s.fns[i].Name()) == nil {
					b.Fatal("not found")
				}
				i = (i + 7919) % len(s.fns)
			}
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
