package wasmobj

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

func TestTargets(t *testing.T) {
	objtest.Run(t, objtest.Wasm, func(t *testing.T, tg objtest.Target, data []byte) {
		obj, err := NewBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		objtest.CheckBytes(t, data, obj)
		objtest.CheckTarget(t, obj, "wasm", tg)
		hs, _ := obj.Sections()
		for _, name := range []string{"type", "import", "function", "code", "data", "name", "producers", "go:buildid"} {
			if objtest.FindSection(hs, name) < 0 {
				t.Errorf("no section %q", name)
			}
		}
		mem := hs[len(hs)-1]
		if mem.Name != "linear memory" || mem.Flags != object.SectionAlloc|object.SectionWrite || mem.Addr%16 != 0 {
			t.Fatalf("last section %+v, want the linear memory", mem)
		}
		b, _ := obj.SectionData(len(hs) - 1)
		checkSegments(t, data, mem, b)
		if i := bytes.Index(b, []byte{0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8}); i < 0 || (mem.Addr+uint64(i))%8 != 0 {
			t.Errorf("no aligned pclntab header in the memory (%d)", i)
		}
		// The function names: main.main at (0x1000 + its index)<<16,
		// the index counted by the export of the entry point (run or
		// _start), which the linker writes as a function index.
		l := obj.(object.SymbolLookup)
		for _, name := range []string{"main.main", "main.work", "runtime.main"} {
			s, err := l.LookupSymbol(name)
			if err != nil || s.Addr < 0x1000<<16 || s.Addr&0xffff != 0 {
				t.Errorf("LookupSymbol(%q) = %+v, %v", name, s, err)
			}
		}
		if _, err := l.LookupSymbol("runtime.nosuchsymbol"); err == nil {
			t.Error("a missing symbol was found")
		}
	})
}

// checkSegments decodes the data segments of the module itself, as the
// WebAssembly binary format specifies them, and checks that mem (the
// linear memory section and its data) holds each at its offset and
// nothing but zeros elsewhere.
func checkSegments(t *testing.T, data []byte, mem object.SectionHeader, b []byte) {
	t.Helper()
	covered := make([]bool, len(b))
	nseg := 0
	for off := 8; off < len(data); {
		id := data[off]
		size, n := binary.Uvarint(data[off+1:])
		body := data[off+1+n : off+1+n+int(size)]
		off += 1 + n + int(size)
		if id != 11 {
			continue
		}
		count, n := binary.Uvarint(body)
		body = body[n:]
		for range count {
			// flags 0, i32.const <sleb128>, end, size, bytes
			if body[0] != 0 || body[1] != 0x41 {
				t.Fatalf("segment %d: % x", nseg, body[:4])
			}
			addr, n := sleb(body[2:])
			body = body[2+n+1:]
			size, n := binary.Uvarint(body)
			seg := body[n : n+int(size)]
			body = body[n+int(size):]
			at := uint64(addr) - mem.Addr
			if !bytes.Equal(b[at:at+size], seg) {
				t.Fatalf("segment %d at %#x differs from the memory", nseg, addr)
			}
			for i := range seg {
				covered[int(at)+i] = true
			}
			nseg++
		}
	}
	for i, c := range covered {
		if !c && b[i] != 0 {
			t.Fatalf("memory byte at %#x is %#x outside every segment", mem.Addr+uint64(i), b[i])
		}
	}
	if nseg < 10 {
		t.Errorf("only %d segments", nseg)
	}
	t.Logf("%d segments in %d bytes of memory", nseg, len(b))
}

// sleb decodes a signed LEB128 number.
func sleb(b []byte) (int64, int) {
	var v int64
	var shift uint
	for i, c := range b {
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, i + 1
		}
	}
	return 0, 0
}

func TestCorrupt(t *testing.T) {
	orig := objtest.Binary(t, objtest.JSWasm)
	patch := objtest.Patcher(orig)
	files := []objtest.Corrupt{
		{Name: "empty"},
		{Name: "magic", Data: orig[:4]},
		{Name: "version 2", Data: patch(func(b []byte) { b[4] = 2 })},
		{Name: "header only", Data: orig[:8], WantOpen: true},
		{Name: "truncated", Data: orig[:len(orig)/2]},
		{Name: "unknown section", Data: append(bytes.Clone(orig[:8]), 0x7f, 0)},
		{Name: "huge section", Data: append(bytes.Clone(orig[:8]), 1, 0xff, 0xff, 0xff, 0xff, 0x0f)},
		{Name: "overlong size", Data: append(bytes.Clone(orig[:8]), 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00)},
		{Name: "segment far away", Data: append(bytes.Clone(orig[:8]), 11, 11, 1, 0, 0x41, 0xff, 0xff, 0xff, 0xff, 0x07, 0x0b, 1, 1), WantOpen: true},
		// 1 GiB of memory between two bytes: refused, not allocated.
		{Name: "two segments far apart", Data: append(bytes.Clone(orig[:8]), 11, 17, 2, 0, 0x41, 0, 0x0b, 1, 1, 0, 0x41, 0x80, 0x80, 0x80, 0x80, 0x04, 0x0b, 1, 1)},
		{Name: "many segments", Data: append(bytes.Clone(orig[:8]), 11, 5, 0xff, 0xff, 0xff, 0xff, 0x0f)},
		{Name: "bad names", Data: append(bytes.Clone(orig[:8]), 0, 8, 4, 'n', 'a', 'm', 'e', 1, 9, 9), WantOpen: true},
	}
	objtest.RunCorrupt(t, files, NewBytes, nil)
}

// TestUnterminatedNames checks that a name section without NULs (round 3,
// r03, whose names are length-prefixed here: its counts and indexes
// change) costs no more than its size.
func TestUnterminatedNames(t *testing.T) {
	data := objtest.Binary(t, objtest.WASIP1Wasm)
	obj, err := NewBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := obj.Sections()
	i := objtest.FindSection(hs, "name")
	if i < 0 {
		t.Fatal("no name section")
	}
	objtest.CheckNamesBounded(t, data, hs[i].Offset, hs[i].FileSize, NewBytes)
}
