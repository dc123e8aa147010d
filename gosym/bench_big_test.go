package gosym

import (
	"debug/elf"
	stdgosym "debug/gosym"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The Big benchmarks run on real binaries of 2–75 MB listed in
// GOSYM_BIG_BINARIES, a colon-separated list of paths (.ci/bigbins.sh
// downloads Debian's and prints the list), and skip when it is unset. They
// measure what must not grow with the binary: Open, and lookups over a
// profiler's working set, each next to debug/gosym in the same run
// (BENCHMARKS.md, "Big binaries: Open and cold lookups").
//
//	export GOSYM_BIG_BINARIES=$(.ci/bigbins.sh)
//	go test ./gosym -run '^$' -bench 'BenchmarkBig' -benchmem

// bigBenchBinaries returns the paths of GOSYM_BIG_BINARIES, skipping the
// benchmark if it is unset.
func bigBenchBinaries(b *testing.B) []string {
	v := os.Getenv("GOSYM_BIG_BINARIES")
	if v == "" {
		b.Skip("GOSYM_BIG_BINARIES is not set (see .ci/bigbins.sh)")
	}
	return filepath.SplitList(v)
}

// bigName names a big binary in a benchmark: its base name.
func bigName(path string) string { return strings.ReplaceAll(filepath.Base(path), "/", "_") }

// stdlibOpen reads path the way a debug/gosym user does: debug/elf finds
// the pclntab (the .gopclntab section, else the runtime.pclntab and
// runtime.epclntab symbols) and the text start (runtime.text, else
// .text), and NewTable decodes every function. It returns nil if there
// is no pclntab so to find (dockerd: an externally linked PIE, whose
// pclntab is in .data.rel.ro, without symbols).
func stdlibOpen(b testing.TB, path string) *stdgosym.Table {
	f, err := elf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		syms, _ = f.DynamicSymbols()
	}
	var text, pcStart, pcEnd uint64
	if s := f.Section(".text"); s != nil {
		text = s.Addr
	}
	for _, s := range syms {
		switch s.Name {
		case "runtime.text":
			text = s.Value
		case "runtime.pclntab":
			pcStart = s.Value
		case "runtime.epclntab":
			pcEnd = s.Value
		}
	}
	var pcln []byte
	if s := f.Section(".gopclntab"); s != nil {
		if pcln, err = s.Data(); err != nil {
			b.Fatal(err)
		}
	} else if pcEnd > pcStart {
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && p.Vaddr <= pcStart && pcEnd <= p.Vaddr+p.Filesz {
				pcln = make([]byte, pcEnd-pcStart)
				if _, err := p.ReadAt(pcln, int64(pcStart-p.Vaddr)); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if pcln == nil {
		return nil
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

// BenchmarkBigOpen opens each big binary and closes it; the stdlib side
// is stdlibOpen (debug/elf's Open, the symbols, NewTable). Open's work
// must not depend on the binary: the same allocations for every one. It
// reports the page faults of an Open too (faults/op, Linux): each page of
// the fresh mapping that Open reads costs one, the most of its time on a
// virtual machine.
func BenchmarkBigOpen(b *testing.B) {
	for _, path := range bigBenchBinaries(b) {
		b.Run("bin="+bigName(path)+"/impl=gosym", func(b *testing.B) {
			c := startCPU(b)
			f0, ok0 := threadFaults()
			for b.Loop() {
				tab, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				tab.Close()
			}
			f1, ok1 := threadFaults()
			c.stop()
			if ok0 && ok1 {
				b.ReportMetric(float64(f1-f0)/float64(b.N), "faults/op")
			}
		})
		b.Run("bin="+bigName(path)+"/impl=stdlib", func(b *testing.B) {
			if stdlibOpen(b, path) == nil {
				b.Skip("debug/gosym: no .gopclntab section and no runtime.pclntab symbol")
			}
			c := startCPU(b)
			for b.Loop() {
				stdlibOpen(b, path)
			}
			c.stop()
		})
	}
}

// bigColdPCs is how many PCs a cold set holds: a profiler's working set,
// far more than the caches hold.
const bigColdPCs = 200_000

// bigSet is a big binary opened by both sides, with a cold set of
// bigColdPCs PCs drawn from a fixed seed, each in a random function at a
// random offset (one that debug/gosym places in a function too).
type bigSet struct {
	tab   *Table
	std   *stdgosym.Table
	cold  []uint64
	nfunc int
}

var bigSets sync.Map // path -> *bigSet

func loadBigSet(b *testing.B, path string) *bigSet {
	if v, ok := bigSets.Load(path); ok {
		return v.(*bigSet)
	}
	tab, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	s := &bigSet{tab: tab, std: stdlibOpen(b, path)}
	var fns []Function
	for f, err := range tab.Functions() {
		if err != nil {
			b.Fatal(err)
		}
		if f.End() > f.Entry() {
			fns = append(fns, f)
		}
	}
	s.nfunc = len(fns)
	r := rand.New(rand.NewPCG(26, 200_000))
	for len(s.cold) < bigColdPCs {
		f := fns[r.IntN(len(fns))]
		pc := f.Entry() + r.Uint64N(f.End()-f.Entry())
		if s.std != nil && s.std.PCToFunc(pc) == nil {
			// debug/gosym ends the last function early (hugo's main.main).
			continue
		}
		s.cold = append(s.cold, pc)
	}
	bigSets.Store(path, s)
	return s
}

// bigHotPCs is how many PCs of the cold set the hot set holds: as in
// BenchmarkResolveLocations's warm set, few enough that their functions'
// data stay in the caches.
const bigHotPCs = 4096

// BenchmarkBigResolveLocations cycles through a big binary's cold set
// (set=cold) and through the first bigHotPCs PCs of it (set=hot):
// ResolveLocations against debug/gosym's PCToLine on the same PCs. As in
// BenchmarkResolveLocations, two passes over the set run before the
// timing (the steady state of a profiler that keeps its Table).
func BenchmarkBigResolveLocations(b *testing.B) {
	for _, path := range bigBenchBinaries(b) {
		for _, set := range []string{"cold", "hot"} {
			pcs := func(s *bigSet) []uint64 {
				if set == "hot" {
					return s.cold[:bigHotPCs]
				}
				return s.cold
			}
			b.Run("bin="+bigName(path)+"/set="+set+"/impl=gosym", func(b *testing.B) {
				s := loadBigSet(b, path)
				pcs := pcs(s)
				locs := make([]Location, 0, 32)
				for range 2 {
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
				b.ReportMetric(float64(s.nfunc), "funcs")
			})
			b.Run("bin="+bigName(path)+"/set="+set+"/impl=stdlib", func(b *testing.B) {
				s := loadBigSet(b, path)
				if s.std == nil {
					b.Skip("debug/gosym: no .gopclntab section and no runtime.pclntab symbol")
				}
				pcs := pcs(s)
				for _, pc := range pcs {
					s.std.PCToLine(pc)
				}
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
	}
}
