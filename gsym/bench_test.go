package gsym

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/lidia"
)

// The benchmarks run side by side (BENCHMARKS.md, "GSYM"):
//
//	go test ./gsym -run '^$' -bench . -benchmem -count 5
//
// Write and lidia.Write export the go binary of the installed toolchain;
// Lookup and LidiaLookup look up the same PCs of it in the two files;
// Size writes the test binary (which has DWARF) and has
// llvm-gsymutil-14 --convert it, reporting both files' bytes.

// reportCPU reports the process's CPU time per operation since start
// (GC included): less sensitive than wall time to a loaded machine.
func reportCPU(b *testing.B, start time.Duration) {
	if d := cpuTime() - start; d > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkWrite(b *testing.B) {
	tab := openTable(b, toolBinary(b, "go"))
	b.ReportAllocs()
	var n countWriter
	start := cpuTime()
	for b.Loop() {
		n = 0
		if err := Write(&n, tab); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
	b.ReportMetric(float64(n), "bytes")
}

func BenchmarkLidiaWrite(b *testing.B) {
	tab := openTable(b, toolBinary(b, "go"))
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if err := lidia.Write(io.Discard, tab); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// lookupPCs returns the go binary's Table and about 10,000 of its PCs.
func lookupPCs(b *testing.B) (*gosym.Table, []uint64) {
	tab := openTable(b, toolBinary(b, "go"))
	return tab, samplePCs(functions(b, tab), 10000)
}

func BenchmarkLookup(b *testing.B) {
	tab, pcs := lookupPCs(b)
	r := newReader(b, writeBytes(b, tab))
	buf := make([]gosym.Location, 0, 64)
	for _, pc := range pcs {
		buf, _ = r.Lookup(pc, buf) // warm: the files' paths
	}
	b.ReportAllocs()
	start := cpuTime()
	i := 0
	for b.Loop() {
		buf, _ = r.Lookup(pcs[i], buf)
		if i++; i == len(pcs) {
			i = 0
		}
	}
	reportCPU(b, start)
}

func BenchmarkLidiaLookup(b *testing.B) {
	tab, pcs := lookupPCs(b)
	var data bytes.Buffer
	if err := lidia.Write(&data, tab); err != nil {
		b.Fatal(err)
	}
	r, err := lidia.NewReader(data.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]gosym.Location, 0, 64)
	b.ReportAllocs()
	start := cpuTime()
	i := 0
	for b.Loop() {
		buf, _ = r.Lookup(pcs[i], buf)
		if i++; i == len(pcs) {
			i = 0
		}
	}
	reportCPU(b, start)
}

// BenchmarkSize reports the size of the GSYM files written by Write and
// by llvm-gsymutil-14 --convert for two binaries with DWARF: the corpus's
// go1.26.8.linux-amd64 and the gosym command built by the installed
// toolchain. The contents differ where TestLLVMConvertDWARF counts
// differences: ours has the padding after each function and the lines
// and inlined calls of compiler-generated wrappers, which Go's DWARF
// lacks; llvm's has the symbol table's functions outside the pclntab.
func BenchmarkSize(b *testing.B) {
	tool, err := exec.LookPath(gsymutilName)
	if err != nil {
		b.Skipf("%s is missing", gsymutilName)
	}
	dir := b.TempDir()
	bins := map[string]string{}
	entries, err := testcorpus.Entries()
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if e.Name == "go1.26.8.linux-amd64" {
			data, err := e.Binary()
			if err != nil {
				b.Fatal(err)
			}
			bins["corpus"] = filepath.Join(dir, e.Name)
			if err := os.WriteFile(bins["corpus"], data, 0o666); err != nil {
				b.Fatal(err)
			}
		}
	}
	bins["gosym"] = filepath.Join(dir, "gosym")
	if msg, err := exec.Command("go", "build", "-o", bins["gosym"], "github.com/gosym-dev/gosym/cmd/gosym").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, msg)
	}
	for _, name := range []string{"corpus", "gosym"} {
		b.Run(name, func(b *testing.B) {
			bin := bins[name]
			ours := writeBytes(b, openTable(b, bin))
			out := bin + ".llvm.gsym"
			if msg, err := exec.Command(tool, "--convert", bin, "--out-file", out, "--quiet").CombinedOutput(); err != nil {
				b.Fatalf("%s --convert: %v\n%s", tool, err, msg)
			}
			theirs, err := os.ReadFile(out)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
			}
			b.ReportMetric(float64(len(ours)), "bytes-ours")
			b.ReportMetric(float64(len(theirs)), "bytes-llvm")
			b.ReportMetric(float64(newReader(b, ours).NumAddresses()), "funcs-ours")
			b.ReportMetric(float64(newReader(b, theirs).NumAddresses()), "funcs-llvm")
		})
	}
}
