package gosym

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// scanInputs are data without a Go table, each filling n bytes: zeros,
// random bytes, and two hostile patterns. "header words" repeats the
// second word of a header (two zero bytes, quantum 1, pointer size 8), so
// that every position passes the scan's first test; "0xff" is what the
// scan by magic once stepped through byte by byte.
var scanInputs = []struct {
	name string
	make func(n int) []byte
}{
	{"zeros", func(n int) []byte { return bytes.Repeat([]byte{0}, n) }},
	{"random", func(n int) []byte {
		b := make([]byte, n)
		rand.NewChaCha8([32]byte{1}).Read(b)
		return b
	}},
	{"header-words", func(n int) []byte {
		b := make([]byte, n)
		for i := 0; i+8 <= n; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], 0x08010000_08010000)
		}
		return b
	}},
	{"0x08", func(n int) []byte { return bytes.Repeat([]byte{8}, n) }},
	{"0xff", func(n int) []byte { return bytes.Repeat([]byte{0xff}, n) }},
}

// TestScanNoTable checks that scanning data without a table finds
// nothing and allocates nothing: no candidate position gets past the
// allocation-free checks (headerShape, parseMagic), so the work is one
// pass of constant cost per word.
func TestScanNoTable(t *testing.T) {
	for _, in := range scanInputs {
		t.Run(in.name, func(t *testing.T) {
			data := in.make(1 << 20)
			var known, unknown int
			allocs := testing.AllocsPerRun(3, func() {
				known, unknown = scanPclntab(data, 0x400000, true)
			})
			if known >= 0 || unknown >= 0 {
				t.Errorf("scan found a table at %d / %d", known, unknown)
			}
			if allocs != 0 {
				t.Errorf("scan of 1 MiB allocated %v times; want 0", allocs)
			}
		})
	}
}

// BenchmarkScanNoTable scans 500 MB without a Go table (BENCHMARKS.md,
// "Scanning for a hidden table"): the scan for a header with a known
// magic and, at once, for one recognized by structure.
func BenchmarkScanNoTable(b *testing.B) {
	const size = 500 << 20
	for _, in := range scanInputs {
		b.Run(fmt.Sprintf("%s-500MB", in.name), func(b *testing.B) {
			data := in.make(size)
			b.SetBytes(size)
			cpu := startCPU(b)
			for b.Loop() {
				if k, u := scanPclntab(data, 0x400000, true); k >= 0 || u >= 0 {
					b.Fatal("found a table")
				}
			}
			cpu.stop()
		})
	}
}
