package gosym

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/internal/wasmfile"
)

// TestWasmHighPCCommitted checks Go 1.28's WebAssembly PC rule (bit 63 set
// in every PC, no 0x1000 bias: FORMAT.md, "WebAssembly") without a
// toolchain, on the stripped wasip1 module of TestWasmHighPC and the
// self-report its runtime printed, committed in testdata/wasm: every
// resume point agrees with the runtime's CallersFrames, lookups allocate
// nothing, every function's entry has bit 63, and a PC without it (the
// same PC under the older rule, or cleared of the bit) is in no function.
func TestWasmHighPCCommitted(t *testing.T) {
	tab, rep := wasmHighPCTable(t)
	if tab.GoVersion() != rep.GoVersion {
		t.Errorf("GoVersion = %q, the runtime says %q", tab.GoVersion(), rep.GoVersion)
	}
	compareSelfReport(t, tab, rep, testcorpus.MinorVersion(rep.GoVersion))
	checkWasmAllocs(t, tab, rep)

	n := 0
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 && f.Entry() != 1<<63 {
			t.Errorf("first function %s at %#x, want 1<<63", f.Name(), f.Entry())
		}
		if f.Entry()&(1<<63) == 0 || f.Entry()&0xffff != 0 || f.End() != f.Entry()+1<<16 {
			t.Fatalf("function %s: [%#x, %#x), want [1<<63 | i<<16, +1<<16)", f.Name(), f.Entry(), f.End())
		}
		n++
	}
	if n != tab.NumFunctions() {
		t.Errorf("%d functions, NumFunctions %d", n, tab.NumFunctions())
	}

	checked := 0
	for _, r := range rep.Records {
		if r.Gap || len(r.Frames) == 0 {
			continue
		}
		low := r.PC &^ (1 << 63)
		for _, pc := range []uint64{low, low + 0x1000<<16} {
			if f, err := tab.ResolveFunction(pc); !errors.Is(err, ErrPCNotFound) {
				t.Fatalf("ResolveFunction(%#x) (%#x without bit 63) = %s, %v; want ErrPCNotFound", pc, r.PC, f.Name(), err)
			}
			if locs, err := tab.ResolveLocations(pc, nil); !errors.Is(err, ErrPCNotFound) {
				t.Fatalf("ResolveLocations(%#x) = %v, %v; want ErrPCNotFound", pc, locs, err)
			}
		}
		if checked++; checked == 1000 {
			break
		}
	}
}

// TestWasmHighPCDamaged changes the committed Go 1.28-style module's
// moduledata and functab so that the two WebAssembly PC rules disagree
// (FORMAT.md, "WebAssembly"): opening must fail with ErrCorrupted rather
// than read one rule's table with the other's PCs. Rewritten whole to the
// older rule, it must answer at the older PCs what it answered at the
// newer ones, and nothing at the newer.
func TestWasmHighPCDamaged(t *testing.T) {
	tab, _ := wasmHighPCTable(t)
	base := cloneObject(t, tab.Object())
	mem, md, ftab := wasmHighPCOffsets(t, tab, base)
	le := binary.LittleEndian
	// olderEntries adds 0x1000 to each entry offset, in the functab and
	// in the function's record, as Go 1.25–1.27 write them.
	olderEntries := func(b []byte) {
		n := uint32(tab.NumFunctions())
		for i := range n + 1 {
			e := ftab + i*8
			le.PutUint32(b[e:], le.Uint32(b[e:])+0x1000)
			if i < n {
				r := ftab + le.Uint32(b[e+4:])
				le.PutUint32(b[r:], le.Uint32(b[r:])+0x1000)
			}
		}
	}
	put64 := func(off uint32, v uint64) func([]byte) {
		return func(b []byte) { binary.LittleEndian.PutUint64(b[off:], v) }
	}
	for _, c := range []struct {
		name   string
		damage func(mem []byte)
	}{
		{"minpc without bit 63", put64(md+mdMinPC*8, 0)},
		{"minpc of the older rule", put64(md+mdMinPC*8, wasmMinPC)},
		{"text at 1<<63", put64(md+mdText*8, 1<<63)},
		{"functab and records of the older rule", olderEntries},
	} {
		t.Run(c.name, func(t *testing.T) {
			obj := damaged(base, mem, 0, nil, 0)
			obj.data[mem] = append([]byte(nil), obj.data[mem]...)
			c.damage(obj.data[mem])
			if _, err := NewTable(obj); !errors.Is(err, ErrCorrupted) {
				t.Fatalf("NewTable: %v, want ErrCorrupted", err)
			}
		})
	}

	// With the text itself at bit 63 (text = minpc = 1<<63, etext past
	// the last PC), as a linker may place it, the module answers at
	// every PC what it answered.
	obj := damaged(base, mem, 0, nil, 0)
	b := append([]byte(nil), obj.data[mem]...)
	obj.data[mem] = b
	le.PutUint64(b[md+mdText*8:], 1<<63)
	le.PutUint64(b[md+mdEtext*8:], le.Uint64(b[md+mdMaxPC*8:])+1<<16)
	high, err := NewTable(obj)
	if err != nil {
		t.Fatalf("NewTable, text at 1<<63: %v", err)
	}
	var want, got []Location
	for _, pc := range samplePCs(t, tab, 512) {
		want, err = tab.ResolveLocations(pc, want)
		if err != nil {
			t.Fatal(err)
		}
		got, err = high.ResolveLocations(pc, got)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("text at 1<<63: ResolveLocations(%#x) = %v, %v; want %v", pc, got, err, want)
		}
	}
	if f, err := high.ResolveFunction(samplePCs(t, tab, 1)[0] &^ (1 << 63)); !errors.Is(err, ErrPCNotFound) {
		t.Fatalf("text at 1<<63: a PC without bit 63 is in %s (%v), want ErrPCNotFound", f.Name(), err)
	}

	// Rewritten whole to the older rule (functab, records, minpc and
	// maxpc), the module opens and answers at each PC of the older rule
	// what it answered at the same PC of the newer.
	obj = damaged(base, mem, 0, nil, 0)
	b = append([]byte(nil), obj.data[mem]...)
	obj.data[mem] = b
	olderEntries(b)
	for _, w := range []uint32{md + mdMinPC*8, md + mdMaxPC*8} {
		le.PutUint64(b[w:], le.Uint64(b[w:])&^(1<<63)+wasmMinPC)
	}
	older, err := NewTable(obj)
	if err != nil {
		t.Fatalf("NewTable, the older rule: %v", err)
	}
	for _, pc := range samplePCs(t, tab, 512) {
		want, err = tab.ResolveLocations(pc, want)
		if err != nil {
			t.Fatal(err)
		}
		old := pc&^(1<<63) + wasmMinPC
		got, err = older.ResolveLocations(old, got)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("the older rule: ResolveLocations(%#x) = %v, %v; the newer at %#x: %v", old, got, err, pc, want)
		}
		if _, err := older.ResolveFunction(pc); !errors.Is(err, ErrPCNotFound) {
			t.Fatalf("the older rule: ResolveFunction(%#x) = %v, want ErrPCNotFound", pc, err)
		}
	}
}

// wasmHighPCTable opens the committed module of TestWasmHighPC.
func wasmHighPCTable(t *testing.T) (*Table, *testcorpus.Report) {
	t.Helper()
	rep, err := testcorpus.ParseReport(gunzipFile(t, wasmHighPCReport))
	if err != nil {
		t.Fatal(err)
	}
	return mustTable(t, gunzipFile(t, wasmHighPCModule)), rep
}

// wasmHighPCOffsets returns, in the memObject m copied from tab's module,
// the index of the linear memory section and the offsets in it of the
// moduledata and of the functab.
func wasmHighPCOffsets(tb testing.TB, tab *Table, m *memObject) (sec int, md, ftab uint32) {
	tb.Helper()
	sec = m.section(wasmfile.MemoryName)
	if sec < 0 {
		tb.Fatal("no linear memory section")
	}
	lo := m.hdrs[sec].Addr
	mem := m.data[sec]
	ftab = uint32(tab.addr + uint64(len(tab.data)-len(tab.hdr.funcs)) - lo)
	for off := 0; off+(mdText+1)*8 <= len(mem); off += 8 {
		w := func(i int) uint64 { return binary.LittleEndian.Uint64(mem[off+8*i:]) }
		if w(mdPcHeader) == tab.addr && w(mdMinPC) == 1<<63 {
			return sec, uint32(off), ftab
		}
	}
	tb.Fatal("no moduledata with minpc 1<<63 in the linear memory")
	return
}

// TestWasmHighTextNative checks that a native table whose moduledata
// puts the text at 1<<63 (text, minpc, maxpc and etext moved there
// together), which the words of a wasm module with its text at bit 63
// also fit, is not read as WebAssembly: it is read natively, or refused.
// (It was read as wasm, with a wrong function at every PC but the first,
// until the end entry was checked against maxpc.)
func TestWasmHighTextNative(t *testing.T) {
	tab := selfTable(t)
	if tab.hdr.rd.ptrSize != 8 || tab.hdr.rd.bigEndian || len(tab.textSects) > 1 {
		t.Skip("wants a little-endian 64-bit single-text binary")
	}
	m := cloneObject(t, tab.Object())
	le := binary.LittleEndian
	sec, md := -1, -1
	for i, d := range m.data {
		for off := 0; off+(mdEtext+1)*8 <= len(d); off += 8 {
			w := func(k int) uint64 { return le.Uint64(d[off+8*k:]) }
			if w(mdPcHeader) == tab.addr && w(mdText) == tab.text && w(mdMinPC) == tab.text {
				sec, md = i, off
			}
		}
	}
	if sec < 0 {
		t.Skip("no moduledata found")
	}
	d := m.data[sec]
	w := func(k int) uint64 { return le.Uint64(d[md+8*k:]) }
	shift := func(k int) { le.PutUint64(d[md+8*k:], w(k)-tab.text+1<<63) }
	for _, k := range []int{mdText, mdMinPC, mdMaxPC, mdEtext} {
		shift(k)
	}
	high, err := NewTable(m)
	if err != nil {
		if !errors.Is(err, ErrCorrupted) {
			t.Fatalf("NewTable: %v, want a table or ErrCorrupted", err)
		}
		return
	}
	if high.wasm {
		t.Errorf("a native amd64 table with text at 1<<63 is read as WebAssembly")
	}
	// The native reading: at each PC moved by as much as the text, the
	// function the table finds at the PC, moved.
	for _, pc := range samplePCs(t, tab, 512) {
		f, err := tab.ResolveFunction(pc)
		if err != nil {
			t.Fatal(err)
		}
		moved := pc - tab.text + 1<<63
		g, err := high.ResolveFunction(moved)
		if err != nil || g.Name() != f.Name() || g.Entry()-moved != f.Entry()-pc {
			t.Fatalf("ResolveFunction(%#x) = %q at %#x, %v; want %q at %#x", moved, g.Name(), g.Entry(), err, f.Name(), f.Entry()-tab.text+1<<63)
		}
	}
}
