package gosym

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/gosym-dev/gosym/internal/testcorpus"
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
	{"padded-headers", func(n int) []byte {
		// At each multiple of 96: a little-endian 8-word header with
		// 8-byte pointers whose name table starts at 0x60 after 24 zero
		// bytes (Go 1.18–1.25's layout, garble v0.15.0's), one function
		// and one file, every table at 0x60; it decodes and fails only
		// on its functab, whose first record offset is the next
		// header's second word.
		b := make([]byte, n)
		for i := 0; i+96 <= n; i += 96 {
			binary.LittleEndian.PutUint64(b[i:], 0x08010000_91f4aace)
			for k, w := range []uint64{1, 1, 0, 96, 96, 96, 96, 96} {
				binary.LittleEndian.PutUint64(b[i+8+8*k:], w)
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

// TestScanHeadersInput checks that the "headers" and "padded-headers"
// inputs are what they claim: a header that decodes every 20 (96) bytes,
// not only one that passes the scan's first tests.
func TestScanHeadersInput(t *testing.T) {
	for _, in := range scanInputs {
		period := map[string]int{"headers": 20, "padded-headers": 96}[in.name]
		if period == 0 {
			continue
		}
		data := in.make(1 << 16)
		decoded := 0
		for off := 0; off+8 <= len(data); off += 4 {
			var h header
			if nameTableFollows(data[off:]) != 0 && h.read(data[off:]).ok() {
				decoded++
			}
		}
		if want := len(data) / period * 9 / 10; decoded < want {
			t.Errorf("%s: %d headers decode in %d bytes; want at least %d", in.name, decoded, len(data), want)
		}
	}
}

// TestScanMagiclessCorpus checks scanMagicless, the scan's own copy of
// plausibleUnknown's tests, against plausibleUnknown on every corpus
// entry's pclntab: as written (a known magic: the scan must find it where
// it is), with its magic replaced by garble's kind of random word, and
// with each header word, each of the first functab words and each of the
// first records' name offsets changed in turn. The two must agree on every
// variant, and a header plausibleUnknown accepts must be found by the
// scan.
func TestScanMagiclessCorpus(t *testing.T) {
	var accepted atomic.Int32
	t.Cleanup(func() { // after the parallel subtests
		if accepted.Load() == 0 && !t.Failed() {
			t.Error("no corpus table passes as a garbled header with its magic replaced")
		}
	})
	forEachEntry(t, func(t *testing.T, e testcorpus.Entry, bin []byte, tab *Table) {
		// 4 bytes of zeros before the table, so that it is not at offset 0.
		buf := append(make([]byte, 4, 4+len(tab.data)), tab.data...)
		if known, _ := scanPclntab(buf, 0x1000, false); known != 4 {
			t.Fatalf("the scan found the table with its magic at %d; want 4", known)
		}
		c := buf[4:]
		rd := tab.hdr.rd
		put := func(off uint64, v uint32) {
			if rd.bigEndian {
				binary.BigEndian.PutUint32(c[off:], v)
			} else {
				binary.LittleEndian.PutUint32(c[off:], v)
			}
		}
		put(0, 0xceaaf491)
		check := func(what string) {
			t.Helper()
			want := plausibleUnknown(c)
			layouts := nameTableFollows(c)
			if got := layouts != 0 && scanMagicless(c, layouts); got != want {
				t.Errorf("%s: scanMagicless says %v, plausibleUnknown %v", what, got, want)
			}
		}
		check("magic replaced")
		// Every 1.18+ table, whatever the padding between its header and
		// its name table (none, or 0x48 to 0x60 in Go 1.18–1.25), passes
		// with garble's kind of magic: garble v0.15.0 builds with Go 1.25.
		if m := tab.hdr.magic; (m == magic118 || m == magic120) && !plausibleUnknown(c) {
			t.Errorf("a Go 1.18+ table (name table at %#x) is refused with its magic replaced", cap(tab.data)-cap(tab.hdr.names))
		}
		// And its records' sizes tell Go 1.18–1.19's layout from 1.20's.
		if m := tab.hdr.magic; m == magic118 || m == magic120 {
			if h, err := parseHeader(c); err != nil {
				t.Errorf("with its magic replaced, a %#x table: %v", uint32(m), err)
			} else if h.magic != m {
				t.Errorf("with its magic replaced, a %#x table reads as the %#x family", uint32(m), uint32(h.magic))
			}
		}
		if plausibleUnknown(c) {
			accepted.Add(1)
			if _, unknown := scanPclntab(buf, 0x1000, true); unknown != 4 {
				t.Errorf("plausibleUnknown accepts the header with its magic replaced, the scan found it at %d", unknown)
			}
		}
		// The words to disturb: the header's (4 bytes at a time), the
		// first functab entries, and the name offsets of the records
		// they point at (Go 1.18+).
		var words []uint64
		for off := uint64(8); off < 8+uint64(tab.hdr.words*rd.ptrSize); off += 4 {
			words = append(words, off)
		}
		// The padding between the header and the name table, if any.
		if tab.hdr.magic == magic118 || tab.hdr.magic == magic120 {
			for off := 8 + uint64(tab.hdr.words*rd.ptrSize); off < uint64(cap(tab.data)-cap(tab.hdr.names)); off += 4 {
				words = append(words, off)
			}
		}
		if fo := uint64(len(c)) - uint64(len(tab.hdr.funcs)); tab.hdr.entrySize() == 8 && fo < uint64(len(c)) {
			for i := uint64(0); i < 18 && fo+i*4+4 <= uint64(len(c)); i++ {
				words = append(words, fo+i*4)
				if i%2 == 1 {
					if rec := fo + uint64(rd.u32(c[fo+i*4:])) + 4; rec+4 <= uint64(len(c)) {
						words = append(words, rec)
					}
				}
			}
		}
		for _, off := range words {
			orig := rd.u32(c[off:])
			for _, v := range []uint32{orig + 1, orig - 1, orig + 4, orig - 8, 0, 1, 0xffffffff, orig ^ 0x80000000, orig << 1} {
				put(off, v)
				check(fmt.Sprintf("word at %#x %#x→%#x", off, orig, v))
			}
			put(off, orig)
		}
	})
}

// TestNameTableAfter checks where an unknown magic's name table may start
// after its header: right after it, or at the next multiple of 8, 16 or
// 32 bytes (Go 1.18–1.25) with only zeros between, and nowhere else.
func TestNameTableAfter(t *testing.T) {
	for _, c := range []struct {
		end, off uint64
		pad      byte // the padding's bytes
		want     bool
	}{
		{72, 72, 0, true},   // Go 1.26 on, 64-bit
		{72, 96, 0, true},   // Go 1.18–1.25, 64-bit
		{72, 80, 0, true},   // a name table shorter than 32 bytes
		{72, 96, 1, false},  // padding that is not zeros: a header word added
		{72, 88, 0, false},  // not a multiple of 16 or 32
		{72, 128, 0, false}, // beyond the largest alignment
		{72, 64, 0, false},  // inside the header
		{40, 64, 0, true},   // Go 1.18–1.25, 32-bit
		{40, 48, 0, true},
		{40, 40, 0, true},
		{36, 40, 0, true}, // a 7-word 32-bit header, aligned to 8
		{64, 96, 0, false},
		{72, 200, 0, false}, // past the data
	} {
		data := make([]byte, 160)
		for i := c.end; i < min(c.off, uint64(len(data))); i++ {
			data[i] = c.pad
		}
		if got := nameTableAfter(data, c.end, c.off); got != c.want {
			t.Errorf("header ending at %d, name table at %d, padding %#x: %v; want %v", c.end, c.off, c.pad, got, c.want)
		}
	}
}
