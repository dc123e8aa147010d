package gsym

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/alloctest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

var le = binary.LittleEndian

// TestBadHeader checks that NewReader rejects damaged headers and tables
// outside the file with an error wrapping ErrCorrupted, allocating
// nothing sized by the header's counts.
func TestBadHeader(t *testing.T) {
	good := smallFile(le)
	patch := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return b
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"short", good[:headerSize-1]},
		{"magic", patch(func(b []byte) { b[0] ^= 1 })},
		{"version", patch(func(b []byte) { le.PutUint16(b[hVersion:], 2) })},
		{"address size", patch(func(b []byte) { b[hAddrSize] = 3 })},
		{"UUID size", patch(func(b []byte) { b[hUUIDSize] = maxUUID + 1 })},
		{"addresses", patch(func(b []byte) { le.PutUint32(b[hNumAddrs:], 1<<32-1) })},
		{"string table", patch(func(b []byte) { le.PutUint32(b[hStrSize:], 1<<32-1) })},
		{"string table offset", patch(func(b []byte) { le.PutUint32(b[hStrOff:], 1<<32-1) })},
		{"files", patch(func(b []byte) { le.PutUint32(b[headerSize+12*2:], 1<<32-1) })},
		{"truncated", good[:headerSize+12*2+2]},
	}
	for _, tt := range tests {
		var err error
		alloc := alloctest.Bytes(func() { _, err = NewReader(tt.data) })
		if !isCorrupt(err) {
			t.Errorf("%s: NewReader: %v, want ErrCorrupted", tt.name, err)
		}
		if alloc > 64<<10 {
			t.Errorf("%s: NewReader allocated %d bytes", tt.name, alloc)
		}
	}
}

// TestBadFunctionInfo checks Lookup on damaged FunctionInfos, line tables
// and inline trees: an error wrapping ErrCorrupted, never a panic, with
// the work bounded by the data.
func TestBadFunctionInfo(t *testing.T) {
	deep := func(depth int) []byte {
		// Nested nodes all covering 0x1000, each with one child.
		var p []byte
		for range depth {
			p = append(p, enc(1, 0, 0x10, byte(1), uint32(1), 1, 1)...)
		}
		for range depth {
			p = append(p, 0)
		}
		return p
	}
	unterminated := enc(1, 0, 0x10, byte(1), uint32(1), 0, 0, // root
		1, 0x20, 0x10, byte(1), uint32(1), 1, 1) // a child not covering, its children never end
	tests := []struct {
		name   string
		lines  []byte
		inline []byte
	}{
		{"line table without end", enc(int64(0), int64(0), 1, byte(opFirstSpec)), nil},
		{"line table truncated LEB", enc(int64(0), int64(0)), nil},
		{"line LEB too long", enc(int64(0), int64(0), bytes.Repeat([]byte{0x80}, 11), byte(1)), nil},
		{"line delta range reversed", enc(int64(3), int64(1), 1, byte(opFirstSpec), byte(opEnd)), nil},
		{"no row at the address", enc(int64(0), int64(0), 1, byte(opAdvancePC), 4, byte(opEnd)), nil},
		{"row in file 0", enc(int64(0), int64(0), 1, byte(opSetFile), 0, byte(opFirstSpec), byte(opEnd)), nil},
		{"row in a file past the table", enc(int64(0), int64(0), 1, byte(opSetFile), 99, byte(opFirstSpec), byte(opEnd)), nil},
		{"inline tree too deep", enc(int64(0), int64(0), 1, byte(opFirstSpec), byte(opEnd)), deep(2 * maxDepth)},
		{"inline range count", enc(int64(0), int64(0), 1, byte(opFirstSpec), byte(opEnd)), enc(uint64(1) << 40)},
		{"inline subtree without end", enc(int64(0), int64(0), 1, byte(opFirstSpec), byte(opEnd)), unterminated},
		{"call file past the table", enc(int64(0), int64(0), 1, byte(opFirstSpec), byte(opEnd)), enc(1, 0, 0x10, byte(0), uint32(1), 99, 1)},
		{"inline node truncated", enc(int64(0), int64(0), 1, byte(opFirstSpec), byte(opEnd)), enc(1, 0, 0x10, byte(0))},
	}
	for _, tt := range tests {
		data, _ := synth(le, []synthFunc{{addr: 0x1000, size: 0x10, name: "f", lines: tt.lines, inline: tt.inline}}, [][2]string{{"", "f.go"}})
		r := newReader(t, data)
		got, err := r.Lookup(0x1000, nil)
		if !isCorrupt(err) {
			t.Errorf("%s: Lookup = %v, %v; want ErrCorrupted", tt.name, got, err)
		}
		if len(got) != 0 {
			t.Errorf("%s: Lookup returned frames %v with its error", tt.name, got)
		}
	}

	// FunctionInfo-level damage: name 0, data past the file, offsets
	// outside the file.
	data, _ := synth(le, []synthFunc{{addr: 0x1000, size: 0x10, name: "f", lines: enc(int64(0), int64(0), 1, byte(opFirstSpec), byte(opEnd))}}, nil)
	r := newReader(t, data)
	fi := int(le.Uint32(r.infos))
	for name, f := range map[string]func(b []byte){
		"name 0":          func(b []byte) { le.PutUint32(b[fi+4:], 0) },
		"data length":     func(b []byte) { le.PutUint32(b[fi+12:], 1<<31) },
		"info offset":     func(b []byte) { le.PutUint32(b[headerSize+8:], uint32(len(data)-4)) },
		"no end of list":  func(b []byte) { le.PutUint32(b[fi+12:], uint32(len(data)-fi-16)) },
		"info offset max": func(b []byte) { le.PutUint32(b[headerSize+8:], 1<<32-1) },
	} {
		b := bytes.Clone(data)
		f(b)
		got, err := newReader(t, b).Lookup(0x1000, nil)
		if !isCorrupt(err) {
			t.Errorf("%s: Lookup = %v, %v; want ErrCorrupted", name, got, err)
		}
	}
}

// TestNamesBounded checks that Write's output and memory stay in
// proportion with the binary when its function names run together (the
// NUL bytes of the function-name table replaced, as in the reproducer r05
// of issue 21, where lidia.Write made a 123 MB file from a 2.4 MB
// binary): an error wrapping gosym.ErrCorrupted, having allocated at most
// a few times the binary.
func TestNamesBounded(t *testing.T) {
	var e testcorpus.Entry
	entries, err := testcorpus.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range entries {
		if x.Name == "go1.26.8.linux-amd64" {
			e = x
		}
	}
	if e.Name == "" {
		t.Fatal("no go1.26.8.linux-amd64 in the corpus")
	}
	bin, err := e.Binary()
	if err != nil {
		t.Fatal(err)
	}
	bin = bytes.Clone(bin)
	_, sound, err := writeStats(bin)
	if err != nil {
		t.Fatal(err)
	}
	// The function-name table of a Go 1.18+ pclntab (runtime.pcHeader):
	// from funcnameOffset to cuOffset, 64-bit words at 32 and 40.
	h, err := testcorpus.FindPclntab(bin)
	if err != nil {
		t.Fatal(err)
	}
	hdr := bin[h.Offset:]
	lo, hi := h.Offset+int64(le.Uint64(hdr[32:])), h.Offset+int64(le.Uint64(hdr[40:]))
	if h.PtrSize != 8 || h.BigEndian || lo >= hi || hi > int64(len(bin)) {
		t.Fatalf("pclntab header %+v: names at [%#x, %#x)", h, lo, hi)
	}
	for i := lo; i < hi; i++ {
		if bin[i] == 0 {
			bin[i] = 'x'
		}
	}
	n, alloc, err := writeStats(bin)
	t.Logf("names run together in a binary of %d bytes: %d bytes written, %d allocated (%d for the sound binary); %v", len(bin), n, alloc, sound, err)
	if !errors.Is(err, gosym.ErrCorrupted) {
		t.Errorf("Write: %v, want an error wrapping gosym.ErrCorrupted", err)
	}
	if n > int64(len(bin)) {
		t.Errorf("Write wrote %d bytes, more than the binary's %d", n, len(bin))
	}
	// The names may take twice the binary and 1 MiB (budget.Names), and
	// their map as much again.
	if limit := sound + 5*uint64(len(bin)); alloc > limit {
		t.Errorf("Write allocated %d bytes, more than %d (the sound binary's %d and 5 times its size)", alloc, limit, sound)
	}
}

// writeStats opens the binary bin and writes it as a GSYM file, and
// returns the bytes written and allocated.
func writeStats(bin []byte) (written int64, alloc uint64, err error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var cw countWriter
	obj, err := object.NewBytes(bin)
	if err == nil {
		var tab *gosym.Table
		if tab, err = gosym.NewTable(obj); err == nil {
			err = Write(&cw, tab)
		}
	}
	runtime.ReadMemStats(&after)
	return int64(cw), after.TotalAlloc - before.TotalAlloc, err
}

// countWriter counts the bytes written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// TestNameBudget checks that the builder stops adding strings beyond its
// budget, with an error wrapping gosym.ErrCorrupted, and that the
// strings added before stay.
func TestNameBudget(t *testing.T) {
	b := &builder{strOff: map[string]uint32{}, fileIdx: map[string]uint32{}, maxNames: 10, strs: []byte{0}}
	if off := b.str("abcdef"); off != 1 || b.err != nil {
		t.Fatalf("str = %d, %v", off, b.err)
	}
	if off := b.str("abcdef"); off != 1 || b.err != nil {
		t.Fatalf("str again = %d, %v", off, b.err)
	}
	b.str("ghijkl")
	if !errors.Is(b.err, gosym.ErrCorrupted) {
		t.Fatalf("over the budget: %v, want ErrCorrupted", b.err)
	}
	if len(b.strs) != 8 {
		t.Errorf("string table of %d bytes, want 8", len(b.strs))
	}
}
