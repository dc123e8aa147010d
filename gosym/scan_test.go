package gosym

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// scanInputs are data without a Go table, each filling n bytes: zeros,
// random bytes, and hostile patterns. "header-words" repeats the second
// word of a header (two zero bytes, quantum 1, pointer size 8), so that
// every position passes the scan's first test; "known-magic" puts Go
// 1.20's magic before each such word; "headers" is a big-endian 7-word
// header with 4-byte pointers every 20 bytes, each overlapping the next,
// that decodes (its offsets in order and in range, the name table right
// after it) and fails only on its functab: as many candidates as data can
// hold that reach the scan's last checks. "0x08" and "0xff" are what the
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
	{"known-magic", func(n int) []byte {
		b := make([]byte, n)
		for i := 0; i+8 <= n; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], 0x08010000_fffffff1)
		}
		return b
	}},
	{"headers", func(n int) []byte {
		// At each multiple of 20: the magic (100, also the cutab's
		// offset for the header 20 bytes before), the second word (also
		// the filetab's offset, 0x104), nfunc (300, also the pctab's
		// offset), nfiles (1000, the functab's offset), the name table's
		// offset (36, the header's end).
		b := make([]byte, n)
		words := []uint32{100, 0x104, 300, 1000, 36}
		for i := 0; i+20 <= n; i += 20 {
			for k, w := range words {
				binary.BigEndian.PutUint32(b[i+4*k:], w)
			}
		}
		return b
	}},
	{"0x08", func(n int) []byte { return bytes.Repeat([]byte{8}, n) }},
	{"0xff", func(n int) []byte { return bytes.Repeat([]byte{0xff}, n) }},
}

// TestScanNoTable checks that scanning data without a table finds
// nothing and allocates nothing, even where every position passes the
// first test or decodes as a header: every check of a candidate is
// allocation-free, so the work is one pass of constant cost per word.
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

// TestScanHeadersInput checks that the "headers" input is what it claims:
// a header that decodes every 20 bytes, not only one that passes the
// scan's first tests.
func TestScanHeadersInput(t *testing.T) {
	var data []byte
	for _, in := range scanInputs {
		if in.name == "headers" {
			data = in.make(1 << 16)
		}
	}
	decoded := 0
	for off := 0; off+8 <= len(data); off += 4 {
		var h header
		if nameTableFollows(data[off:]) != 0 && h.read(data[off:]).ok() {
			decoded++
		}
	}
	if want := len(data) / 20 * 9 / 10; decoded < want {
		t.Errorf("%d headers decode in %d bytes; want at least %d", decoded, len(data), want)
	}
}
