package gosym_test

import (
	"fmt"
	"log"
	"path"
	"runtime"
	"slices"
	"strings"

	"github.com/gosym-dev/gosym/gosym"
)

// pick is instantiated twice below: the binary holds two functions of one
// name, which differ in their type arguments.
//
//go:noinline
func pick[T any](a, b T, first bool) T {
	if first {
		return a
	}
	return b
}

var picked = fmt.Sprint(pick(1, 2, true), pick("a", "b", false))

const self = "github.com/gosym-dev/gosym/gosym_test."

func ExampleTable_LookupFunctions() {
	tab := openSelf()
	defer tab.Close()
	if picked != "1b" {
		log.Fatal("pick: ", picked)
	}
	var names []string
	for f, err := range tab.LookupFunctions(self + "pick") {
		if err != nil {
			log.Fatal(err)
		}
		names = append(names, strings.TrimPrefix(f.Name(), self))
	}
	slices.Sort(names)
	fmt.Println(names)
	// Output: [pick[go.shape.int] pick[go.shape.string]]
}

func ExampleTable_LinePCs() {
	tab := openSelf()
	defer tab.Close()
	// bump's body is on the line of its func keyword; it is inlined twice
	// into bumpTwice, whose inline tree says where bump is.
	f, err := tab.LookupFunction(self + "bumpTwice")
	if err != nil {
		log.Fatal(err)
	}
	calls, err := f.InlinedCalls(nil)
	if err != nil || len(calls) == 0 {
		log.Fatal("no inlined calls: ", err)
	}
	// A suffix of the file name after a '/' is enough.
	lines, err := tab.LinePCs(path.Base(calls[0].File), calls[0].StartLine, nil)
	if err != nil {
		log.Fatal(err)
	}
	var where []string
	for _, l := range lines {
		where = append(where, strings.TrimPrefix(l.Function, self)+" in "+strings.TrimPrefix(l.Func.Name(), self))
	}
	slices.Sort(where)
	fmt.Println(strings.Join(where, "\n"))
	// Output:
	// bump in bumpTwice
	// bump in bumpTwice
}

func ExampleParseName() {
	for _, name := range []string{
		"net/http.(*Server).Serve.func1",
		"gopkg.in/yaml%2ev3.Unmarshal",
		"main.(*Stack[go.shape.int]).Pop",
	} {
		fmt.Printf("%+v\n", gosym.ParseName(name))
	}
	// Output:
	// {Package:net/http Receiver:Server Pointer:true Func:Serve.func1 TypeArgs: Closure:func1}
	// {Package:gopkg.in/yaml.v3 Receiver: Pointer:false Func:Unmarshal TypeArgs: Closure:}
	// {Package:main Receiver:Stack Pointer:true Func:Pop TypeArgs:[go.shape.int] Closure:}
}

func ExampleTable_BuildInfo() {
	tab := openSelf()
	defer tab.Close()
	bi, err := tab.BuildInfo()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(bi.GoVersion == runtime.Version(), bi.Main.Path)
	// Output: true github.com/gosym-dev/gosym
}

// The packages of a binary with the module of each, as a vulnerability
// scanner matches them with its database.
func ExampleTable_Packages() {
	tab := openSelf()
	defer tab.Close()
	pkgs, err := tab.Packages()
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range pkgs {
		switch p.Path {
		case "runtime", "github.com/gosym-dev/gosym/gosym":
			fmt.Println(p.Path, p.Module)
		}
	}
	// Output:
	// github.com/gosym-dev/gosym/gosym github.com/gosym-dev/gosym
	// runtime std
}
