// Command gosymtest is the test program of the gosym corpus
// (github.com/gosym-dev/gosym/testdata/corpus).
//
// It compiles with every Go release from go1.2.2 on, in GOPATH mode
// (GOPATH=testdata/src/gopath) and in module mode (with a go.mod saying
// "module gosymtest" written next to this file). It exercises what
// symbol-table readers get wrong: deep inline chains across files and
// packages, closures, method values, compiler-generated wrappers,
// defer, panic/recover, a large function, generics (go1.18+ only) and,
// in the cgo variant, a call into C.
//
// Run with the single argument -selfreport it prints, for its own text,
// what the runtime reports about each PC (see selfreport_linux.go and
// testdata/corpus/README.md). It deliberately imports neither fmt nor
// os nor debug/elf: the corpus has a size budget.
package main

// seed keeps the compiler from folding the work away.
var seed = 1

// sink receives values that must look used.
var sink int

// extras are registered by init functions in build-tagged files
// (generics, cgo).
var extras []func() int

// frame is one frame the runtime reports (used by the self-report).
type frame struct {
	function string
	file     string
	line     int
}

func main() {
	if selfReportRequested() {
		selfReport()
		return
	}
	println("gosymtest", work(seed))
}
