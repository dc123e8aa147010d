package lidia

import (
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gosym-dev/gosym/gosym"
)

// toolBinary returns the path of a binary of the installed toolchain: "go"
// or "compile". It skips the benchmark if there is none.
func toolBinary(tb testing.TB, name string) string {
	tb.Helper()
	out, err := exec.Command("go", "env", "GOROOT", "GOTOOLDIR").Output()
	if err != nil {
		tb.Skip("no go command:", err)
	}
	dirs := strings.Fields(string(out))
	path := filepath.Join(dirs[0], "bin", name)
	if name != "go" {
		path = filepath.Join(dirs[1], name)
	}
	if _, err := os.Stat(path); err != nil {
		tb.Skip(err)
	}
	return path
}

// countingWriter counts the bytes written.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)

// BenchmarkWrite measures the export of the go and compile binaries of
// the installed toolchain, with everything and without line tables; it
// reports the file size.
func BenchmarkWrite(b *testing.B) {
	for _, bin := range []string{"go", "compile"} {
		for _, v := range []struct {
			name string
			opts []Option
		}{
			{"full", nil},
			{"nolines", []Option{WithLines(false)}},
		} {
			b.Run(bin+"/"+v.name, func(b *testing.B) {
				tab := openTable(b, toolBinary(b, bin))
				var w countingWriter
				if err := Write(&w, tab, v.opts...); err != nil { // warm the Table's string copies
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu := cpuTime()
				for range b.N {
					w.n = 0
					if err := Write(&w, tab, v.opts...); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu)
				b.ReportMetric(float64(w.n), "file-bytes")
			})
		}
	}
}

// reportCPU reports the CPU time per operation since start (user and
// system, all threads, so GC work counts): on a loaded machine it is a
// steadier measure than the wall-clock ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if d := cpuTime() - start; d > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// samplePCs returns n PCs spread uniformly over the functions' bytes, from a
// fixed seed.
func samplePCs(tb testing.TB, tab *gosym.Table, n int) []uint64 {
	tb.Helper()
	fns := functions(tb, tab)
	lo, hi := fns[0].Entry(), fns[len(fns)-1].End()
	r := rand.New(rand.NewPCG(1, 2))
	pcs := make([]uint64, 0, n)
	for len(pcs) < n {
		pc := lo + r.Uint64N(hi-lo)
		if _, err := tab.ResolveFunction(pc); err == nil {
			pcs = append(pcs, pc)
		}
	}
	return pcs
}
