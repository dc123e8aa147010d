package gsym

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
// Lookup looks up the same PCs of it in the two files, in three orders;
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

// lookupPCs returns the go binary's Table and about 10,000 of its PCs
// besides every function's entry, sorted.
func lookupPCs(b *testing.B) (*gosym.Table, []uint64) {
	tab := openTable(b, toolBinary(b, "go"))
	return tab, samplePCs(functions(b, tab), 10000)
}

// lookupOrders returns the orders in which the lookup benchmarks visit
// pcs: sorted (each function's PCs one after another), random (a fixed
// shuffle of the same PCs) and hot (the first 64 of the random order,
// again and again, as a profile's few hot stacks).
func lookupOrders(pcs []uint64) map[string][]uint64 {
	random := slices.Clone(pcs)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(random), func(i, j int) { random[i], random[j] = random[j], random[i] })
	return map[string][]uint64{"sorted": pcs, "random": random, "hot": random[:64]}
}

// BenchmarkLookup looks up the same PCs of the go binary in the GSYM file
// (Reader) and the Lidia file (lidia.Reader) written for it, in the
// orders of lookupOrders, after one lookup of each PC (Reader indexes
// the file on its first lookup; lidia.Reader when it opens it).
func BenchmarkLookup(b *testing.B) {
	tab, pcs := lookupPCs(b)
	var ld bytes.Buffer
	if err := lidia.Write(&ld, tab); err != nil {
		b.Fatal(err)
	}
	lr, err := lidia.NewReader(ld.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	gr := newReader(b, writeBytes(b, tab))
	readers := []struct {
		name   string
		lookup func(uint64, []gosym.Location) ([]gosym.Location, error)
	}{{"gsym", gr.Lookup}, {"lidia", lr.Lookup}}
	orders := lookupOrders(pcs)
	for _, order := range []string{"sorted", "random", "hot"} {
		for _, rd := range readers {
			b.Run(order+"/"+rd.name, func(b *testing.B) {
				pcs := orders[order]
				buf := make([]gosym.Location, 0, 64)
				for _, pc := range pcs {
					if buf, err = rd.lookup(pc, buf); err != nil {
						b.Fatalf("%#x: %v", pc, err)
					}
				}
				b.ReportAllocs()
				start := cpuTime()
				i := 0
				for b.Loop() {
					buf, _ = rd.lookup(pcs[i], buf)
					if i++; i == len(pcs) {
						i = 0
					}
				}
				reportCPU(b, start)
			})
		}
	}
}

// BenchmarkFirstLookup opens the GSYM file and the Lidia file of the go
// binary and looks up one PC: the cost of Reader's file index, built on
// the first lookup, next to lidia.Reader's, built when it opens a file.
func BenchmarkFirstLookup(b *testing.B) {
	tab, pcs := lookupPCs(b)
	var ld bytes.Buffer
	if err := lidia.Write(&ld, tab); err != nil {
		b.Fatal(err)
	}
	gd := writeBytes(b, tab)
	pc := pcs[len(pcs)/2]
	b.Run("gsym", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			r, err := NewReader(gd)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.Lookup(pc, nil); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(indexBytes(r.fileIndex())), "index-bytes")
		}
		reportCPU(b, start)
		b.ReportMetric(float64(len(gd)), "file-bytes")
	})
	b.Run("lidia", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			r, err := lidia.NewReader(ld.Bytes())
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.Lookup(pc, nil); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, start)
	})
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
