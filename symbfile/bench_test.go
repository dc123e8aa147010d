package symbfile

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
)

// toolBinary returns the path of the go binary of the installed
// toolchain, or skips.
func toolBinary(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skip("no go command:", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "bin", "go")
	if _, err := os.Stat(path); err != nil {
		tb.Skip("no go binary:", err)
	}
	return path
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// BenchmarkWrite measures the export of the go binary of the installed
// toolchain, ranges and return pads, and reports the file size and bytes
// per function.
func BenchmarkWrite(b *testing.B) {
	path := toolBinary(b)
	for _, v := range []struct {
		name string
		pads bool
	}{{"ranges", false}, {"returnpads", true}} {
		b.Run("go/"+v.name, func(b *testing.B) {
			tab, err := gosym.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer tab.Close()
			var w countingWriter
			b.ReportAllocs()
			cpu := cpuTime()
			n := 0
			for b.Loop() {
				n++
				w = countingWriter{}
				if err := Write(&w, tab, WithReturnPads(v.pads)); err != nil {
					b.Fatal(err)
				}
			}
			if d := cpuTime() - cpu; d > 0 {
				b.ReportMetric(float64(d.Nanoseconds())/float64(n), "cpu-ns/op")
			}
			b.ReportMetric(float64(w.n), "file-bytes")
			b.ReportMetric(float64(w.n)/float64(tab.NumFunctions()), "bytes/func")
		})
	}
}

var _ io.Writer = (*countingWriter)(nil)

// BenchmarkNewReader reads the ranges file of the go binary.
func BenchmarkNewReader(b *testing.B) {
	tab := openTable(b, toolBinary(b))
	data := writeBytes(b, tab)
	b.ReportAllocs()
	var r *Reader
	for b.Loop() {
		var err error
		if r, err = NewReader(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.NumRanges()), "ranges")
}

// BenchmarkLookup looks up 10,000 PCs spread over the go binary's
// functions in its ranges file, and its return pads in the return pads
// file; gosym's ResolveLocations on the binary for comparison.
func BenchmarkLookup(b *testing.B) {
	tab := openTable(b, toolBinary(b))
	fns := functions(b, tab)
	var pcs []uint64
	for i := range 10000 {
		f := fns[i*len(fns)/10000]
		pcs = append(pcs, f.Entry()+uint64(i*7919)%(f.End()-f.Entry()))
	}
	ranges := newReader(b, writeBytes(b, tab))
	pads := newReader(b, writeBytes(b, tab, WithReturnPads(true)))
	var padPCs []uint64
	for i := range 10000 {
		padPCs = append(padPCs, pads.pads[i*len(pads.pads)/10000].va)
	}
	buf := make([]gosym.Location, 0, 64)
	run := func(b *testing.B, pcs []uint64, look func(uint64) error) {
		b.ReportAllocs()
		i := 0
		cpu := cpuTime()
		for b.Loop() {
			if err := look(pcs[i%len(pcs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
		if d := cpuTime() - cpu; d > 0 {
			b.ReportMetric(float64(d.Nanoseconds())/float64(i), "cpu-ns/op")
		}
	}
	b.Run("ranges", func(b *testing.B) {
		run(b, pcs, func(pc uint64) (err error) { buf, err = ranges.Lookup(pc, buf); return })
	})
	b.Run("returnpads", func(b *testing.B) {
		run(b, padPCs, func(pc uint64) (err error) { buf, err = pads.Lookup(pc, buf); return })
	})
	b.Run("gosym", func(b *testing.B) {
		run(b, pcs, func(pc uint64) (err error) { buf, err = tab.ResolveLocations(pc, buf); return })
	})
}
