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
