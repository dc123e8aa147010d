package gosym_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/gosym-dev/gosym/gosym"
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
	// Output: github.com/gosym-dev/gosym/gosym_test.caller example_test.go 29
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
	// github.com/gosym-dev/gosym/gosym_test.bumpTwice example_test.go 38
}

func ExampleFunction_Lines() {
	bumpTwice()
	tab := openSelf()
	defer tab.Close()
	f, err := tab.LookupFunction("github.com/gosym-dev/gosym/gosym_test.bumpTwice")
	if err != nil {
		log.Fatal(err)
	}
	lines, err := f.Lines(gosym.LinesResult{})
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range lines.FunctionLines {
		// The ranges of the inlined calls of bump carry the PC of
		// their call site in bumpTwice.
		if l.ParentPC != 0 {
			outer, _ := f.ResolveLocations(l.ParentPC, nil)
			fmt.Println(l.Name, l.Line, "called at line", outer[0].Line)
		}
	}
	// Output:
	// github.com/gosym-dev/gosym/gosym_test.bump 35 called at line 39
	// github.com/gosym-dev/gosym/gosym_test.bump 35 called at line 40
}
