package lidia_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/lidia"
)

// Export the symbol table of a Go executable (here the running program) as
// a Lidia file, then look up the entry of a function in it.
func ExampleWrite() {
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	tab, err := gosym.Open(exe)
	if err != nil {
		log.Fatal(err)
	}
	defer tab.Close()

	path := filepath.Join(os.TempDir(), "example.lidia")
	defer os.Remove(path)
	out, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := lidia.Write(out, tab); err != nil { // inline ranges, files and lines
		log.Fatal(err)
	}
	if err := out.Close(); err != nil {
		log.Fatal(err)
	}

	r, err := lidia.Open(path, lidia.WithCRC())
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	f, err := tab.LookupFunction("github.com/gosym-dev/gosym/lidia.Write")
	if err != nil {
		log.Fatal(err)
	}
	frames, err := r.Lookup(f.Entry(), nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, fr := range frames {
		fmt.Println(fr.Function, filepath.Base(fr.File))
	}
	// Output:
	// github.com/gosym-dev/gosym/lidia.Write write.go
}

//go:noinline
func leaf(x int) int { return x * x }

func inner(x int) int { return leaf(x) + 1 } // inlined into outer

func outer(x int) int { return inner(x) * 3 }

var keep = outer // outer itself stays in the binary

// Look up an address inside an inlined call: the frames come innermost
// first, each with its file and line, the physical function last.
func ExampleReader_Lookup() {
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	tab, err := gosym.Open(exe)
	if err != nil {
		log.Fatal(err)
	}
	defer tab.Close()
	var buf bytes.Buffer
	if err := lidia.Write(&buf, tab); err != nil {
		log.Fatal(err)
	}
	r, err := lidia.NewReader(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	_ = keep(1)

	// An address of outer's code that comes from inner: where inner
	// calls leaf.
	f, err := tab.LookupFunction("github.com/gosym-dev/gosym/lidia_test.outer")
	if err != nil {
		log.Fatal(err)
	}
	lines, err := f.Lines(nil)
	if err != nil {
		log.Fatal(err)
	}
	var pc uint64
	for _, l := range lines {
		if l.Function == "github.com/gosym-dev/gosym/lidia_test.inner" {
			pc = l.PCLo
			break
		}
	}

	frames, err := r.Lookup(pc, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, fr := range frames {
		fmt.Printf("%s %s:%d\n", fr.Function, filepath.Base(fr.File), fr.Line)
	}
	// Output:
	// github.com/gosym-dev/gosym/lidia_test.inner example_test.go:63
	// github.com/gosym-dev/gosym/lidia_test.outer example_test.go:65
}
