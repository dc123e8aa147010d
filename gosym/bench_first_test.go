package gosym

import (
	"debug/elf"
	stdgosym "debug/gosym"
	"testing"
)

// The first-answer benchmarks measure what a debugger pays between opening
// a binary and its first answer: each iteration opens the binary afresh
// and asks one question. The impl=stdlib side opens the binary with
// debug/elf, reads its .gopclntab and builds debug/gosym's Table, as
// cmd/internal/objfile does, and asks the same question; the text address
// it needs is found once, outside the loop, in its favour (from Go 1.26
// it takes a search of the symbol table). impl=stdlib-inmem builds the
// Table from the bytes already in memory: debug/gosym's NewTable alone.

// firstInput is what the stdlib side of a first-answer benchmark starts
// from, and the question both sides ask.
type firstInput struct {
	path  string
	pcln  []byte // for stdlib-inmem
	text  uint64
	file  string // the file and line of main.main's entry
	line  uint32
	fname string // main.main
}

func loadFirstInput(b *testing.B, name string) firstInput {
	s := loadBenchSet(b, name)
	path := benchBinary(b, name)
	f, err := elf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	pcln, err := f.Section(".gopclntab").Data()
	if err != nil {
		b.Fatal(err)
	}
	main, err := s.tab.LookupFunction("main.main")
	if err != nil {
		b.Fatal(err)
	}
	locs, err := s.tab.ResolveLocations(main.Entry(), nil)
	if err != nil || len(locs) == 0 {
		b.Fatal(locs, err)
	}
	in := firstInput{path: path, pcln: pcln, text: s.tab.text, file: locs[len(locs)-1].File, line: locs[len(locs)-1].Line, fname: "main.main"}
	if in.text == 0 {
		in.text = f.Section(".text").Addr
	}
	return in
}

// stdTable makes a debug/gosym Table: from the file, or from in.pcln.
func (in firstInput) stdTable(b *testing.B, inmem bool) *stdgosym.Table {
	pcln := in.pcln
	if !inmem {
		f, err := elf.Open(in.path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if pcln, err = f.Section(".gopclntab").Data(); err != nil {
			b.Fatal(err)
		}
	}
	t, err := stdgosym.NewTable(nil, stdgosym.NewLineTable(pcln, in.text))
	if err != nil {
		b.Fatal(err)
	}
	return t
}

// stdlibImpls are the stdlib sides of the first-answer benchmarks.
var stdlibImpls = []struct {
	name  string
	inmem bool
}{{"stdlib", false}, {"stdlib-inmem", true}}

// open opens in.path with Open.
func (in firstInput) open(b *testing.B) *Table {
	tab, err := Open(in.path)
	if err != nil {
		b.Fatal(err)
	}
	return tab
}

// BenchmarkFirstLinePCs opens the binary and finds the PCs of main.main's
// first line: Open and LinePCs against debug/gosym's NewTable and
// LineToPC.
func BenchmarkFirstLinePCs(b *testing.B) {
	for _, name := range benchNames {
		b.Run("bin="+name+"/impl=gosym", func(b *testing.B) {
			in := loadFirstInput(b, name)
			c := startCPU(b)
			for b.Loop() {
				tab := in.open(b)
				if pcs, err := tab.LinePCs(in.file, in.line, nil); err != nil || len(pcs) == 0 {
					b.Fatal(pcs, err)
				}
				tab.Close()
			}
			c.stop()
		})
		for _, impl := range stdlibImpls {
			b.Run("bin="+name+"/impl="+impl.name, func(b *testing.B) {
				in := loadFirstInput(b, name)
				c := startCPU(b)
				for b.Loop() {
					if _, _, err := in.stdTable(b, impl.inmem).LineToPC(in.file, int(in.line)); err != nil {
						b.Fatal(err)
					}
				}
				c.stop()
			})
		}
	}
}

// BenchmarkFirstLookupFunctions opens the binary and looks up main.main:
// Open and LookupFunctions against debug/gosym's NewTable and LookupFunc.
func BenchmarkFirstLookupFunctions(b *testing.B) {
	for _, name := range benchNames {
		b.Run("bin="+name+"/impl=gosym", func(b *testing.B) {
			in := loadFirstInput(b, name)
			c := startCPU(b)
			for b.Loop() {
				tab := in.open(b)
				n := 0
				for _, err := range tab.LookupFunctions(in.fname) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n == 0 {
					b.Fatal("not found")
				}
				tab.Close()
			}
			c.stop()
		})
		for _, impl := range stdlibImpls {
			b.Run("bin="+name+"/impl="+impl.name, func(b *testing.B) {
				in := loadFirstInput(b, name)
				c := startCPU(b)
				for b.Loop() {
					if in.stdTable(b, impl.inmem).LookupFunc(in.fname) == nil {
						b.Fatal("not found")
					}
				}
				c.stop()
			})
		}
	}
}

// BenchmarkFirstFiles opens the binary and lists its source files: Open
// and Files against debug/gosym's NewTable and its Files map.
func BenchmarkFirstFiles(b *testing.B) {
	for _, name := range benchNames {
		b.Run("bin="+name+"/impl=gosym", func(b *testing.B) {
			in := loadFirstInput(b, name)
			c := startCPU(b)
			for b.Loop() {
				tab := in.open(b)
				n := 0
				for range tab.Files() {
					n++
				}
				if n == 0 {
					b.Fatal("no files")
				}
				tab.Close()
			}
			c.stop()
		})
		for _, impl := range stdlibImpls {
			b.Run("bin="+name+"/impl="+impl.name, func(b *testing.B) {
				in := loadFirstInput(b, name)
				c := startCPU(b)
				for b.Loop() {
					n := 0
					for range in.stdTable(b, impl.inmem).Files {
						n++
					}
					if n == 0 {
						b.Fatal("no files")
					}
				}
				c.stop()
			})
		}
	}
}
