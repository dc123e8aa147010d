package gosym

import (
	"debug/elf"
	stdgosym "debug/gosym"
	"testing"
)

// The first-answer benchmarks measure what a debugger pays between opening
// a binary and its first answer: each iteration opens the binary afresh
// and asks one question. The impl=stdlib side is debug/gosym's NewTable
// and the same question, from the pclntab bytes and text address already
// in memory (reading them from the file is left out, in its favour).

// firstInput is what the stdlib side of a first-answer benchmark starts
// from, and the question both sides ask.
type firstInput struct {
	path  string
	pcln  []byte
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

// stdTable makes a debug/gosym Table from in.
func (in firstInput) stdTable(b *testing.B) *stdgosym.Table {
	t, err := stdgosym.NewTable(nil, stdgosym.NewLineTable(in.pcln, in.text))
	if err != nil {
		b.Fatal(err)
	}
	return t
}

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
		b.Run("bin="+name+"/impl=stdlib", func(b *testing.B) {
			in := loadFirstInput(b, name)
			c := startCPU(b)
			for b.Loop() {
				if _, _, err := in.stdTable(b).LineToPC(in.file, int(in.line)); err != nil {
					b.Fatal(err)
				}
			}
			c.stop()
		})
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
		b.Run("bin="+name+"/impl=stdlib", func(b *testing.B) {
			in := loadFirstInput(b, name)
			c := startCPU(b)
			for b.Loop() {
				if in.stdTable(b).LookupFunc(in.fname) == nil {
					b.Fatal("not found")
				}
			}
			c.stop()
		})
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
		b.Run("bin="+name+"/impl=stdlib", func(b *testing.B) {
			in := loadFirstInput(b, name)
			c := startCPU(b)
			for b.Loop() {
				n := 0
				for range in.stdTable(b).Files {
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
