package lidia

import (
	"bytes"
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
	path := toolBinaryOrEmpty(name)
	if path == "" {
		tb.Skipf("no %s binary in the installed toolchain", name)
	}
	return path
}

// toolBinaryOrEmpty is toolBinary, or "" where there is no such binary.
func toolBinaryOrEmpty(name string) string {
	out, err := exec.Command("go", "env", "GOROOT", "GOTOOLDIR").Output()
	if err != nil {
		return ""
	}
	dirs := strings.Fields(string(out))
	path := filepath.Join(dirs[0], "bin", name)
	if name != "go" {
		path = filepath.Join(dirs[1], name)
	}
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}

// countingWriter counts the bytes written and keeps the header.
type countingWriter struct {
	n      int64
	header []byte
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if len(w.header) < headerSize {
		w.header = append(w.header, p[:min(len(p), headerSize-len(w.header))]...)
	}
	w.n += int64(len(p))
	return len(p), nil
}

// reportTables reports the number of ranges and the size of each table
// from a file's header.
func reportTables(b *testing.B, h []byte) {
	n := le.Uint64(h[hVACount:])
	b.ReportMetric(float64(n), "ranges")
	b.ReportMetric(float64(n*(le.Uint64(h[hVAWidth:])+numFields*le.Uint64(h[hRangeWidth:]))), "va+range-bytes")
	b.ReportMetric(float64(le.Uint64(h[hStrSize:])), "strings-bytes")
	b.ReportMetric(float64(le.Uint64(h[hLineCount:])*2*le.Uint64(h[hLineWidth:])), "lines-bytes")
}

var _ io.Writer = (*countingWriter)(nil)

// BenchmarkWrite measures the export of the go and compile binaries of
// the installed toolchain, with everything, without line tables, and with
// names only (the physical functions, as Pyroscope's own files); it reports
// the file size.
func BenchmarkWrite(b *testing.B) {
	for _, bin := range []string{"go", "compile"} {
		for _, v := range []struct {
			name string
			opts []Option
		}{
			{"full", nil},
			{"nolines", []Option{WithLines(false)}},
			{"namesonly", []Option{WithInlines(false), WithFiles(false), WithLines(false)}},
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
					w.n, w.header = 0, w.header[:0]
					if err := Write(&w, tab, v.opts...); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu)
				b.ReportMetric(float64(w.n), "file-bytes")
				reportTables(b, w.header)
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

// lookupSetup writes the go binary of the installed toolchain (or, without
// one, the test binary) and returns its table, the file and 10,000 PCs
// spread uniformly over its functions.
func lookupSetup(b *testing.B) (*gosym.Table, []byte, []uint64) {
	b.Helper()
	var tab *gosym.Table
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if path := filepath.Join(strings.TrimSpace(string(out)), "bin", "go"); fileExists(path) {
			tab = openTable(b, path)
		}
	}
	if tab == nil {
		tab = selfTable(b)
	}
	var buf bytes.Buffer
	if err := Write(&buf, tab); err != nil {
		b.Fatal(err)
	}
	return tab, buf.Bytes(), samplePCs(b, tab, 10000)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// BenchmarkLookup compares, per lookup over the same PCs: Lookup on a
// Reader over bytes and over a mapped file; the re-implementation of
// Pyroscope's reader (ReaderAt probes, string copies; see pyroscope_test.go) over
// a bytes.Reader, as Pyroscope's symbolizer reads a file it holds in
// memory; and gosym's ResolveLocations on the binary itself.
func BenchmarkLookup(b *testing.B) {
	tab, data, pcs := lookupSetup(b)
	b.Run("lidia", func(b *testing.B) {
		r := newReader(b, data)
		benchLookups(b, pcs, func(pc uint64, dst []gosym.Location) []gosym.Location {
			dst, _ = r.Lookup(pc, dst)
			return dst
		})
	})
	b.Run("lidia-mmap", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "go.lidia")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		benchLookups(b, pcs, func(pc uint64, dst []gosym.Location) []gosym.Location {
			dst, _ = r.Lookup(pc, dst)
			return dst
		})
	})
	b.Run("pyroscope", func(b *testing.B) {
		p, err := openPyro(bytes.NewReader(data), false)
		if err != nil {
			b.Fatal(err)
		}
		var pf []pyroFrame
		benchLookups(b, pcs, func(pc uint64, dst []gosym.Location) []gosym.Location {
			pf = p.Lookup(pf, pc)
			return dst
		})
	})
	b.Run("gosym", func(b *testing.B) {
		var locs []gosym.Location
		benchLookups(b, pcs, func(pc uint64, dst []gosym.Location) []gosym.Location {
			locs, _ = tab.ResolveLocations(pc, locs)
			return dst
		})
	})
}

// benchLookups runs lookup over pcs, b.N lookups in all, and reports the
// CPU time per lookup too.
func benchLookups(b *testing.B, pcs []uint64, lookup func(pc uint64, dst []gosym.Location) []gosym.Location) {
	dst := make([]gosym.Location, 0, 64)
	for _, pc := range pcs {
		dst = lookup(pc, dst)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := range b.N {
		dst = lookup(pcs[i%len(pcs)], dst)
	}
	reportCPU(b, cpu)
}

// BenchmarkLookupVsPyroscope times Lookup and the Pyroscope-design reader
// on the same PCs, taking turns in one run so that both see the same load,
// and reports the ratio of their times (target: at most 0.25). Each turn
// goes over the PCs twice: the first pass starts with the caches holding
// what the other reader left there (cold-ratio), the second repeats the
// first pass's lookups, as a symbolizer does with a profile's PCs (ratio).
func BenchmarkLookupVsPyroscope(b *testing.B) {
	_, data, pcs := lookupSetup(b)
	r := newReader(b, data)
	p, err := openPyro(bytes.NewReader(data), false)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]gosym.Location, 0, 64)
	var pf []pyroFrame
	ours := func() {
		for _, pc := range pcs {
			dst, _ = r.Lookup(pc, dst)
		}
	}
	theirs := func() {
		for _, pc := range pcs {
			pf = p.Lookup(pf, pc)
		}
	}
	var t [4]time.Duration // ours cold, ours warm, theirs cold, theirs warm
	b.ResetTimer()
	for range b.N {
		for k, pass := range []func(){ours, ours, theirs, theirs} {
			t0 := time.Now()
			pass()
			t[k] += time.Since(t0)
		}
	}
	n := float64(b.N * len(pcs))
	b.ReportMetric(float64(t[1].Nanoseconds())/n, "lidia-ns/lookup")
	b.ReportMetric(float64(t[3].Nanoseconds())/n, "pyroscope-ns/lookup")
	b.ReportMetric(float64(t[1])/float64(t[3]), "ratio")
	b.ReportMetric(float64(t[0])/float64(t[2]), "cold-ratio")
}

// BenchmarkNewReader measures opening the file of the go binary: header
// checks, copying the strings, the two indexes; with CRC, the checksums.
func BenchmarkNewReader(b *testing.B) {
	_, data, _ := lookupSetup(b)
	for _, crc := range []bool{false, true} {
		name := "nocrc"
		var opts []Option
		if crc {
			name, opts = "crc", []Option{WithCRC()}
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := NewReader(data, opts...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
