package gosym

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/oracle"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

func TestParseName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Name
	}{
		{"main.main", Name{Package: "main", Func: "main"}},
		{"runtime.gcBgMarkWorker.func1", Name{Package: "runtime", Func: "gcBgMarkWorker.func1", Closure: "func1"}},
		{"net/http.(*Server).Serve", Name{Package: "net/http", Receiver: "Server", Pointer: true, Func: "Serve"}},
		{"net/netip.Addr.String", Name{Package: "net/netip", Receiver: "Addr", Func: "String"}},
		{"net/http.(*conn).serve.func1", Name{Package: "net/http", Receiver: "conn", Pointer: true, Func: "serve.func1", Closure: "func1"}},
		{"gopkg.in/yaml%2ev3.(*parser).parse", Name{Package: "gopkg.in/yaml.v3", Receiver: "parser", Pointer: true, Func: "parse"}},
		{"github.com/a/b%2ec.F", Name{Package: "github.com/a/b.c", Func: "F"}},
		{"main.(*Stack[go.shape.int]).Pop", Name{Package: "main", Receiver: "Stack", Pointer: true, Func: "Pop", TypeArgs: "[go.shape.int]"}},
		{"main.(*Stack[...]).Pop", Name{Package: "main", Receiver: "Stack", Pointer: true, Func: "Pop", TypeArgs: "[...]"}},
		{"main.Box[go.shape.int].Get", Name{Package: "main", Receiver: "Box", Func: "Get", TypeArgs: "[go.shape.int]"}},
		{"main.(*Box[go.shape.int]).Map[go.shape.string]", Name{Package: "main", Receiver: "Box", Pointer: true, Func: "Map", TypeArgs: "[go.shape.int][go.shape.string]"}},
		{"main.Pair[go.shape.int,go.shape.string]", Name{Package: "main", Func: "Pair", TypeArgs: "[go.shape.int,go.shape.string]"}},
		{"main.Pair[go.shape.int,go.shape.string].func1", Name{Package: "main", Func: "Pair.func1", TypeArgs: "[go.shape.int,go.shape.string]", Closure: "func1"}},
		{"sync/atomic.(*Pointer[go.shape.struct { net/http.f int; \"x.y\" }]).Load", Name{Package: "sync/atomic", Receiver: "Pointer", Pointer: true, Func: "Load", TypeArgs: "[go.shape.struct { net/http.f int; \"x.y\" }]"}},
		{"main.F[go.shape.struct { A int \"json:\\\"a]\\\"\" }]", Name{Package: "main", Func: "F", TypeArgs: "[go.shape.struct { A int \"json:\\\"a]\\\"\" }]"}},
		{"main.F[main.T[a/b.U]].func2.1", Name{Package: "main", Func: "F.func2.1", TypeArgs: "[main.T[a/b.U]]", Closure: "func2.1"}},
		{"main.T.M-fm", Name{Package: "main", Receiver: "T", Func: "M-fm"}},
		{"main.(*T).M-fm", Name{Package: "main", Receiver: "T", Pointer: true, Func: "M-fm"}},
		{"main.glob..func1", Name{Package: "main", Func: "glob..func1", Closure: "func1"}},
		{"main.init.0", Name{Package: "main", Func: "init.0"}},
		{"cmd/go/internal/test.map.init.1", Name{Package: "cmd/go/internal/test", Func: "map.init.1"}},
		{"runtime.send.goready.func1", Name{Package: "runtime", Receiver: "send", Func: "goready.func1", Closure: "func1"}}, // ambiguous: see ParseName
		{"runtime.(*sweepLocked).sweep.(*mheap).freeSpan.func4", Name{Package: "runtime", Receiver: "sweepLocked", Pointer: true, Func: "sweep.(*mheap).freeSpan.func4"}},
		{"main.init.func1", Name{Package: "main", Func: "init.func1", Closure: "func1"}},
		{"main.F.gowrap1", Name{Package: "main", Func: "F.gowrap1", Closure: "gowrap1"}},
		{"main.F.deferwrap2", Name{Package: "main", Func: "F.deferwrap2", Closure: "deferwrap2"}},
		{"main.F-range1", Name{Package: "main", Func: "F-range1"}},
		{"main.F.func1-range2", Name{Package: "main", Func: "F.func1-range2", Closure: "func1-range2"}},
		{"main.T.M-range1", Name{Package: "main", Receiver: "T", Func: "M-range1"}},
		{"main.func·001", Name{Package: "main", Func: "func·001"}},
		{"main.(*T·1).M", Name{Package: "main", Receiver: "T·1", Pointer: true, Func: "M"}},
		{"type:.eq.main.T", Name{Func: "type:.eq.main.T"}},
		{"type..hash.main.T", Name{Func: "type..hash.main.T"}},
		{"go:buildid", Name{Func: "go:buildid"}},
		{"go.(*struct { sync.Mutex }).Lock", Name{Func: "go.(*struct { sync.Mutex }).Lock"}},
		{"_rt0_amd64_linux", Name{Func: "_rt0_amd64_linux"}},
		{"crosscall2", Name{Func: "crosscall2"}},
		{"", Name{}},
		{"main.(*T", Name{Package: "main", Func: "(*T"}},
		{"main.F[int", Name{Package: "main", Func: "F[int"}},
		{"a%zz/b.F", Name{Package: "a%zz/b", Func: "F"}},
	} {
		if got := ParseName(tc.name); got != tc.want {
			t.Errorf("ParseName(%q) = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestCorpusNames compares ParseName with debug/gosym's Sym.PackageName,
// ReceiverName and BaseName on every function name of the corpus. The
// standard library is wrong in three known ways, counted per binary:
//
//   - closure: it reads a closure as a method of a receiver named after
//     everything up to the closure's suffix: "pkg.F.func1" gets receiver
//     "F", "pkg.(*T).M.func1" gets "(*T).M";
//   - prefix: before Go 1.20 it gives compiler-generated names
//     ("type..eq.main.T", "go.(*struct {...}).M") the package "type" or "go",
//     and after it, receivers cut from their parts;
//   - brackets: it cuts a name with two type-argument groups (Go 1.27
//     generic methods) from the first '[' to the last ']';
//   - typeargs: for Go 1.18 binaries it leaves "[...]" in the base name
//     of a generic function.
//
// It does not unescape package paths; their unescaped form is compared.
func TestCorpusNames(t *testing.T) {
	forEachEntry(t, func(t *testing.T, e testcorpus.Entry, bin []byte, tab *Table) {
		std, err := oracle.NewStdlibPclntab(bin)
		if err != nil {
			t.Skipf("debug/gosym cannot read it: %v", err)
		}
		counts := map[string]int{}
		var bad []string
		for _, f := range std.Table.Funcs {
			got := ParseName(f.Name)
			why := nameDisagreement(got, f.Name, unescapePath(f.PackageName()), f.ReceiverName(), f.BaseName())
			counts[why]++
			if why == "other" {
				bad = append(bad, fmt.Sprintf("%q: ParseName %+v; debug/gosym package %q receiver %q base %q",
					f.Name, got, f.PackageName(), f.ReceiverName(), f.BaseName()))
			}
		}
		t.Logf("%d names: %v", len(std.Table.Funcs), counts)
		if len(bad) > 0 {
			t.Errorf("%d names disagree with debug/gosym for no known reason:\n%s", len(bad), strings.Join(bad[:min(len(bad), 20)], "\n"))
		}
	})
}

// nameDisagreement says why ParseName's answer n for name differs from
// debug/gosym's (pkg, recv, base): "" if it does not.
func nameDisagreement(n Name, name, pkg, recv, base string) string {
	wantRecv := n.Receiver
	if n.Pointer {
		wantRecv = "*" + wantRecv
	}
	// "(*T)" and "(T)" (method values before Go 1.?) as "*T" and "T";
	// type arguments left out.
	recv = WithoutTypeArgs(recv)
	if strings.HasPrefix(recv, "(") {
		if i := strings.IndexByte(recv, ')'); i > 0 {
			recv = recv[1:i] + recv[i+1:]
		}
	}
	fn := n.Func
	if n.Package == "" {
		fn = name
	}
	if i := strings.LastIndexByte(fn, '.'); i >= 0 {
		fn = fn[i+1:]
	}
	if pkg == n.Package && recv == wantRecv && base == fn {
		return ""
	}
	if pkg == n.Package && recv == wantRecv && WithoutTypeArgs(base) == fn {
		return "typeargs"
	}
	switch {
	case strings.Count(name, "[") >= 2 && n.TypeArgs != "" && strings.Count(n.TypeArgs, "][") >= 1:
		return "brackets"
	case isCompilerGenerated(name):
		return "prefix"
	}
	// debug/gosym takes everything between the package and the last '.'
	// for the receiver: closures get their function's name as one.
	full := wantRecv
	if i := strings.LastIndexByte(n.Func, '.'); i >= 0 {
		if full != "" {
			full += "."
		}
		full += n.Func[:i]
	}
	if pkg == n.Package && WithoutTypeArgs(base) == fn && recv == full {
		return "closure"
	}
	return "other"
}

func TestSymbolName(t *testing.T) {
	for _, tc := range []struct{ name, pkg, sym string }{
		{"main.main", "main", "main"},
		{"net/http.(*Server).Serve.func1", "net/http", "Server.Serve.func1"},
		{"main.(*Box[go.shape.int]).Map[go.shape.string]", "main", "Box[go.shape.int].Map[go.shape.string]"},
		{"main.Box[go.shape.int].Get", "main", "Box[go.shape.int].Get"},
		{"sync/atomic.(*Pointer[go.shape.struct { a (int) }]).Load", "sync/atomic", "Pointer[go.shape.struct { a (int) }].Load"},
		{"gopkg.in/yaml%2ev3.(*parser).parse", "gopkg.in/yaml.v3", "parser.parse"},
		{"fmt.(*pp).handleMethods.deferwrap1", "fmt", "pp.handleMethods.deferwrap1"},
		{"type:.eq.[2]string", "", "type:.eq.[2]string"},
		{"_rt0_amd64", "", "_rt0_amd64"},
	} {
		if pkg, sym := SymbolName(tc.name); pkg != tc.pkg || sym != tc.sym {
			t.Errorf("SymbolName(%q) = %q, %q; want %q, %q", tc.name, pkg, sym, tc.pkg, tc.sym)
		}
	}
}

func BenchmarkParseName(b *testing.B) {
	var names []string
	for f, err := range selfTable(b).Functions() {
		if err != nil {
			b.Fatal(err)
		}
		names = append(names, f.Name())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ParseName(names[i%len(names)])
	}
}

// TestParseNameAllocs checks when ParseName allocates (r12): never when
// its fields are parts of the name, however many bracket groups follow
// one another, and once when a field is gathered from two places.
func TestParseNameAllocs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		allocs float64
	}{
		{"main.F[x]", 0},
		{"main.F[x][y]", 0},
		{"main.F[x][y][z]", 0},
		{"main.(*T[go.shape.int]).M", 0},
		{"main.T[x][y].M", 0},
		{"main.(*Box[go.shape.int]).Map[go.shape.string]", 1},
		{"main.(*Box[go.shape.int]).Map[x][y]", 1},
		{"main.F[x].func1", 1},
		{"main.F[x].func1[y]", 1},
		{"a%2eb.F[x][y]", 1},
	} {
		var n Name
		if got := testing.AllocsPerRun(100, func() { n = ParseName(tc.name) }); got != tc.allocs {
			t.Errorf("ParseName(%q) = %+v: %v allocations, want %v", tc.name, n, got, tc.allocs)
		}
	}
	for _, tc := range []struct {
		name string
		want Name
	}{
		{"main.F[x][y]", Name{Package: "main", Func: "F", TypeArgs: "[x][y]"}},
		{"main.F[x][y][z]", Name{Package: "main", Func: "F", TypeArgs: "[x][y][z]"}},
		{"main.(*Box[go.shape.int]).Map[x][y]", Name{Package: "main", Receiver: "Box", Pointer: true, Func: "Map", TypeArgs: "[go.shape.int][x][y]"}},
		{"main.F[x].func1[y]", Name{Package: "main", Func: "F.func1", TypeArgs: "[x][y]", Closure: "func1"}},
		{"main.F[x][y.func1", Name{Package: "main", Func: "F[y.func1", TypeArgs: "[x]"}},
		{"main.F[x][y", Name{Package: "main", Func: "F[y", TypeArgs: "[x]"}},
	} {
		if got := ParseName(tc.name); got != tc.want {
			t.Errorf("ParseName(%q) = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
