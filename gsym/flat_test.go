package gsym

import (
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
)

// TestFileIndexMatchesInPlace checks that the file index answers as
// reading the FunctionInfos in place does, at every address of a
// synthetic file with every case it must tell apart: inline trees whose
// children are sorted, overlap or have call file 0; a function without
// line table; a gap between functions; two functions at one address; a
// function of size 0 (it covers up to the next); rows going backward (no
// index: read in place); a function longer than the distance to the next;
// and a last function of size 0 (covering every address above, left to
// the FunctionInfos).
func TestFileIndexMatchesInPlace(t *testing.T) {
	for _, o := range []endian{binary.LittleEndian, binary.BigEndian} {
		lines := enc(int64(0), int64(2), 5, byte(opFirstSpec), byte(opSetFile), 2, byte(opFirstSpec+1+3*0x10), byte(opEnd))
		backward := enc(int64(0), int64(0), 5, byte(opAdvancePC), 8, byte(opAdvancePC), uint64(0xffffffffffffff00), byte(opEnd))
		u32 := func(v uint32) []byte { return o.AppendUint32(nil, v) }
		disjoint := enc(1, 0, 0x40, byte(1), u32(1), 0, 0,
			2, 0x10, 4, 0x20, 4, byte(0), u32(1), 1, 7,
			1, 0x14, 8, byte(1), u32(1), 2, 8,
			1, 2, 2, byte(0), u32(1), 1, 9, 0,
			0)
		overlapping := enc(1, 0, 0x40, byte(1), u32(1), 0, 0,
			1, 0x10, 0x10, byte(0), u32(1), 1, 7,
			1, 0x8, 0x20, byte(0), u32(1), 2, 8,
			1, 0x30, 0, byte(0), u32(1), 1, 3,
			0)
		callFile0 := enc(1, 0, 0x40, byte(1), u32(1), 0, 0,
			1, 0x10, 0x10, byte(1), u32(1), 0, 7,
			1, 0, 4, byte(0), u32(1), 2, 9, 0,
			0)
		funcs := []synthFunc{
			{addr: 0x1000, size: 0x40, name: "f", lines: lines, inline: disjoint},
			{addr: 0x1040, size: 0x20, name: "o", lines: lines, inline: overlapping},
			{addr: 0x1080, size: 0x10, name: "a"},
			{addr: 0x1090, size: 0x10, name: "d1", lines: lines},
			{addr: 0x1090, size: 0x8, name: "d2", lines: lines},
			{addr: 0x10a0, size: 0, name: "z", lines: lines},
			{addr: 0x10c0, size: 0x20, name: "b", lines: backward},
			{addr: 0x1100, size: 0x30, name: "c", lines: lines, inline: callFile0},
			{addr: 0x1120, size: 0x10, name: "e", lines: lines, inline: disjoint},
			{addr: 0x1140, size: 0, name: "last", lines: lines},
		}
		data, _ := synth(o, funcs, [][2]string{{"d", "a.go"}, {"", "b.go"}})
		r := newReader(t, data)
		g := r.fileIndex()
		if g == nil || g.span != 0x140 {
			t.Fatalf("%v: file index %+v; want one of 0x140 bytes", o, g)
		}
		if n := countPieces(g, readInfo); n != 2 {
			t.Errorf("%v: %d pieces read in place, want 2 (d1 and d2, b)", o, n)
		}
		checkFileIndex(t, r, 0x1000, 0x1160)
	}
}

// checkFileIndex checks Lookup against lookupInfos without any index at
// every address from lo to hi-1, at or above the file's base address.
func checkFileIndex(t *testing.T, r *Reader, lo, hi uint64) {
	t.Helper()
	var got, want []gosym.Location
	var err, werr error
	bad := 0
	for a := lo; a < hi; a++ {
		got, err = r.Lookup(a, got)
		want, werr = r.lookupInfos(want[:0], a, false)
		if (err == nil) != (werr == nil) || errors.Is(err, gosym.ErrPCNotFound) != errors.Is(werr, gosym.ErrPCNotFound) || !sameFrames(got, want) {
			if bad++; bad <= 10 {
				t.Errorf("%#x: Lookup %v, %v; in place %v, %v", a, got, err, want, werr)
			}
		}
	}
}

// indexBytes returns the bytes g's tables take (not the paths' bytes,
// which are the Reader's).
func indexBytes(g *fileIndex) int {
	return 4*len(g.starts) + 4*len(g.buckets.at) + 12*len(g.pieces) + 40*len(g.frames) + 16*len(g.paths)
}

// countPieces returns the number of pieces of g whose frame is frame.
func countPieces(g *fileIndex, frame uint32) int {
	n := 0
	for _, p := range g.pieces {
		if p.frame == frame {
			n++
		}
	}
	return n
}

// TestFileIndexSelf checks the file index of the test binary's file: it
// covers every function, none is left to the FunctionInfos, and it holds
// at most a few bytes for each byte of the file.
func TestFileIndexSelf(t *testing.T) {
	tab := selfTable(t)
	data := writeBytes(t, tab)
	r := newReader(t, data)
	g := r.fileIndex()
	fns := functions(t, tab)
	if g == nil || r.base+g.span != fns[len(fns)-1].End() {
		t.Fatalf("file index %v; want one up to %#x", g != nil, fns[len(fns)-1].End())
	}
	if n := countPieces(g, readInfo); n != 0 {
		t.Errorf("%d pieces left to the FunctionInfos", n)
	}
	size := indexBytes(g)
	t.Logf("file of %d bytes: %d pieces, %d frames, %d paths, index of %d bytes", len(data), len(g.pieces), len(g.frames), len(g.paths), size)
	if size > 8*len(data) {
		t.Errorf("index of %d bytes for a file of %d", size, len(data))
	}
	var buf []gosym.Location
	if _, err := r.Lookup(math.MaxUint64, buf); !errors.Is(err, gosym.ErrPCNotFound) {
		t.Errorf("Lookup(MaxUint64): %v", err)
	}
}

// TestFileIndexBounded checks the bound on the work of building the file
// index: a function whose inline tree has 3,000 children that overlap
// (scanned in order at every address, millions of steps for a file of
// 40 KB) stops the index where it starts, and the addresses from there on
// are looked up in place, with the same answers; building takes memory
// in proportion to the file.
func TestFileIndexBounded(t *testing.T) {
	o := binary.LittleEndian
	lines := enc(int64(0), int64(2), 5, byte(opFirstSpec), byte(opSetFile), 2, byte(opFirstSpec+1+3*0x10), byte(opEnd))
	tree := enc(1, 0, 0x2000, byte(1), uint32(1), 0, 0)
	for i := range 3000 {
		tree = append(tree, enc(1, i, 0x100, byte(0), uint32(1), 1, i+1)...)
	}
	tree = append(tree, 0)
	funcs := []synthFunc{
		{addr: 0x1000, size: 0x40, name: "f", lines: lines},
		{addr: 0x1040, size: 0x2000, name: "wide", lines: lines, inline: tree},
		{addr: 0x3040, size: 0x40, name: "g", lines: lines},
	}
	data, _ := synth(o, funcs, [][2]string{{"d", "a.go"}, {"", "b.go"}})
	r := newReader(t, data)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g := r.fileIndex()
	runtime.ReadMemStats(&after)
	if g == nil || g.span != 0x40 {
		t.Fatalf("file index %+v; want one that stops at the wide function", g)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64*uint64(len(data))+4<<20 {
		t.Errorf("building the index of a file of %d bytes allocated %d bytes", len(data), n)
	}
	checkFileIndex(t, r, 0x1000, 0x1040)
	for _, a := range []uint64{0x1040, 0x1041, 0x1100, 0x1fff, 0x3000, 0x303f, 0x3040, 0x3050, 0x3080} {
		checkFileIndex(t, r, a, a+1)
	}
}

// TestFileIndexDeep checks inline trees nested about maxDepth deep: the
// indexes answer as reading in place does, which reports more than
// maxDepth frames as an error.
func TestFileIndexDeep(t *testing.T) {
	lines := enc(int64(0), int64(2), 5, byte(opFirstSpec), byte(opEnd))
	for _, depth := range []int{maxDepth - 2, maxDepth - 1, maxDepth, maxDepth + 1, maxDepth + 2} {
		var tree []byte
		for d := range depth {
			tree = append(tree, enc(1, 0, 0x10, byte(min(depth-1-d, 1)), uint32(1), 1, d+1)...)
		}
		tree = append(tree, make([]byte, depth)...) // the ends of the lists of children
		data, _ := synth(binary.LittleEndian, []synthFunc{{addr: 0x1000, size: 0x10, name: "f", lines: lines, inline: tree}}, [][2]string{{"d", "a.go"}})
		r := newReader(t, data)
		checkFileIndex(t, r, 0x1000, 0x1010)
	}
}
