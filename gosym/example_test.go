package gosym_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/object"
)

// openSelf opens the running executable's symbol table.
func openSelf() *gosym.Table {
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	tab, err := gosym.Open(exe)
	if err != nil {
		log.Fatal(err)
	}
	return tab
}

//go:noinline
func caller() uintptr {
	pc, _, _, _ := runtime.Caller(0)
	return pc
}

var counters [2]int

func bump(p *int) { *p += 3 } // inlined into bumpTwice

//go:noinline
func bumpTwice() {
	bump(&counters[0])
	bump(&counters[1])
}

func ExampleOpen() {
	exe, err := os.Executable() // this example's own test binary
	if err != nil {
		log.Fatal(err)
	}
	tab, err := gosym.Open(exe)
	if err != nil {
		log.Fatal(err)
	}
	defer tab.Close()
	f, err := tab.LookupFunction("main.main")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Name(), f.End() > f.Entry(), tab.GoVersion() == runtime.Version())
	// Output: main.main true true
}

func ExampleTable_ResolveLocations() {
	tab := openSelf()
	defer tab.Close()
	pc := uint64(caller()) // a PC inside caller, which this binary links non-PIE
	locs, err := tab.ResolveLocations(pc, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range locs { // innermost first
		fmt.Println(l.Function, filepath.Base(l.File), l.Line)
	}
	// Output: github.com/gosym-dev/gosym/gosym_test.caller example_test.go 30
}

func ExampleTable_Functions() {
	tab := openSelf()
	defer tab.Close()
	var prev uint64
	for f, err := range tab.Functions() {
		if err != nil {
			log.Fatal(err)
		}
		if f.Entry() < prev {
			log.Fatal("not in address order")
		}
		prev = f.Entry()
		if strings.HasPrefix(f.Name(), "github.com/gosym-dev/gosym/gosym_test.bump") {
			fmt.Println(f.Name(), filepath.Base(f.File()), f.StartLine())
		}
	}
	// bump was inlined everywhere, so only bumpTwice has code of its own.

	// Output:
	// github.com/gosym-dev/gosym/gosym_test.bumpTwice example_test.go 39
}

func ExampleFunction_Lines() {
	bumpTwice()
	tab := openSelf()
	defer tab.Close()
	f, err := tab.LookupFunction("github.com/gosym-dev/gosym/gosym_test.bumpTwice")
	if err != nil {
		log.Fatal(err)
	}
	lines, err := f.Lines(nil)
	if err != nil {
		log.Fatal(err)
	}
	calls, _ := f.InlinedCalls(nil) // bumpTwice's inline tree: each call and its call site
	for _, l := range lines {
		// The ranges of the inlined calls of bump name their call in
		// the tree (the index Call).
		if l.Call >= 0 {
			fmt.Println(l.Function, l.Line, "called at line", calls[l.Call].CallLine)
		}
	}
	// Output:
	// github.com/gosym-dev/gosym/gosym_test.bump 36 called at line 40
	// github.com/gosym-dev/gosym/gosym_test.bump 36 called at line 41
}

var scores [3]int

func addScore(i int) { scores[i] += 10 } // inlined into addScores and playRound

func addScores() { // inlined into playRound
	addScore(0)
	addScore(1)
}

//go:noinline
func playRound() {
	addScores()
	addScore(2)
}

// An inline stack of three frames: addScore inlined into addScores,
// itself inlined into playRound.
func ExampleTable_ResolveLocations_inlined() {
	playRound()
	tab := openSelf()
	defer tab.Close()
	f, err := tab.LookupFunction("github.com/gosym-dev/gosym/gosym_test.playRound")
	if err != nil {
		log.Fatal(err)
	}
	lines, err := f.Lines(nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range lines {
		locs, err := tab.ResolveLocations(l.PCLo, nil)
		if err != nil {
			log.Fatal(err)
		}
		if len(locs) == 3 {
			for _, loc := range locs { // innermost first
				fmt.Println(strings.TrimPrefix(loc.Function, "github.com/gosym-dev/gosym/gosym_test."), filepath.Base(loc.File), loc.Line)
			}
			break
		}
	}
	// Output:
	// addScore example_test.go 125
	// addScores example_test.go 128
	// playRound example_test.go 134
}

// The inline tree of playRound: each call the compiler inlined, with the
// call it sits in and its call site.
func ExampleFunction_InlinedCalls() {
	playRound()
	tab := openSelf()
	defer tab.Close()
	f, err := tab.LookupFunction("github.com/gosym-dev/gosym/gosym_test.playRound")
	if err != nil {
		log.Fatal(err)
	}
	calls, err := f.InlinedCalls(nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range calls {
		depth := 0
		for p := c.Parent; p >= 0; p = calls[p].Parent {
			depth++
		}
		fmt.Printf("%*s%s called at line %d\n", 2*depth, "", strings.TrimPrefix(c.Name, "github.com/gosym-dev/gosym/gosym_test."), c.CallLine)
	}
	// Output:
	// addScores called at line 134
	//   addScore called at line 128
	//   addScore called at line 129
	// addScore called at line 135
}

// The functions inlined into playRound, once each.
func ExampleFunction_InlineFunctions() {
	playRound()
	tab := openSelf()
	defer tab.Close()
	f, err := tab.LookupFunction("github.com/gosym-dev/gosym/gosym_test.playRound")
	if err != nil {
		log.Fatal(err)
	}
	inl, err := f.InlineFunctions(nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, fn := range inl {
		fmt.Println(strings.TrimPrefix(fn.Name, "github.com/gosym-dev/gosym/gosym_test."), filepath.Base(fn.File), fn.StartLine)
	}
	// Output:
	// addScores example_test.go 127
	// addScore example_test.go 125
}

// NewTable reads a binary already in memory (downloaded, extracted from an
// archive, read from a core file) through object.NewBytes, without
// copying it.
func ExampleNewTable() {
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		log.Fatal(err)
	}
	obj, err := object.NewBytes(data)
	if err != nil {
		log.Fatal(err)
	}
	tab, err := gosym.NewTable(obj)
	if err != nil {
		log.Fatal(err)
	}
	f, err := tab.LookupFunction("github.com/gosym-dev/gosym/gosym_test.playRound")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.TrimPrefix(f.Name(), "github.com/gosym-dev/gosym/gosym_test."), filepath.Base(f.File()), f.StartLine())
	// Output: playRound example_test.go 133
}
