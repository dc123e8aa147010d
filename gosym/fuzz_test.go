package gosym

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/gosym-dev/gosym/internal/alloctest"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/internal/wasmfile"
	"github.com/gosym-dev/gosym/object"
)

// fuzzBases are real binaries, one per pclntab layout, that the fuzz
// target damages: the fuzzer picks a base, overwrites some bytes of its
// pclntab (or of the funcdata it points to) and truncates it.
var fuzzBases = struct {
	once sync.Once
	objs []*memObject
	pcs  [][]uint64

	// The wasm base (see fuzzWasmWhich), the offsets in its linear
	// memory of its moduledata and functab, and PCs to look up.
	wasm             *memObject
	wasmMD, wasmFtab uint32
	wasmPCs          []uint64
}{}

var fuzzBaseNames = []string{
	"go1.2.2.linux-amd64",          // 0xfffffffb, no moduledata, one file table
	"go1.5.4.linux-amd64.nodwarf",  // 0xfffffffb, family A
	"go1.10.8.linux-ppc64.nodwarf", // big-endian
	"go1.11.13.linux-amd64",        // 12-byte inline records (call sites)
	"go1.12.17.linux-amd64",        // 0xfffffffb, family B, 20-byte inline records
	"go1.16.15.linux-amd64",        // 0xfffffffa
	"go1.18.10.linux-amd64",        // 0xfffffff0
	"go1.20.14.linux-amd64",        // 0xfffffff1, go:func.* in .rodata
	"go1.26.8.linux-amd64",         // 0xfffffff1, moduledata in .go.module (the newest: keep last)
}

// fuzzWasmWhich is the value of the fuzz targets' which that picks the
// wasm base instead of one of fuzzBaseNames: the committed Go 1.28-style
// WebAssembly module (wasmHighPCModule: PCs with bit 63 set), whose
// pclntab and moduledata are in its linear memory, the section every
// target damages. Other values pick the corpus bases as they did before
// it was added.
const fuzzWasmWhich = 0xff

func loadFuzzBases(t testing.TB) {
	fuzzBases.once.Do(func() {
		entries, err := testcorpus.Entries()
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range fuzzBaseNames {
			i := slices.IndexFunc(entries, func(e testcorpus.Entry) bool { return e.Name == want })
			if i < 0 {
				t.Fatalf("fuzz base %s is not in the corpus", want)
			}
			bin, err := entries[i].Binary()
			if err != nil {
				t.Fatal(err)
			}
			obj, err := object.NewBytes(bin)
			if err != nil {
				t.Fatal(err)
			}
			tab, err := NewTable(obj)
			if err != nil {
				t.Fatal(err)
			}
			fuzzBases.objs = append(fuzzBases.objs, cloneObject(t, obj))
			fuzzBases.pcs = append(fuzzBases.pcs, samplePCs(t, tab, 64))
		}
		bin, err := testcorpus.Gunzip(wasmHighPCModule)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := object.NewBytes(bin)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := NewTable(obj)
		if err != nil {
			t.Fatal(err)
		}
		fuzzBases.wasm = cloneObject(t, obj)
		_, fuzzBases.wasmMD, fuzzBases.wasmFtab = wasmHighPCOffsets(t, tab, fuzzBases.wasm)
		fuzzBases.wasmPCs = samplePCs(t, tab, 64)
	})
	if len(fuzzBases.objs) == 0 {
		t.Fatal("no corpus binaries")
	}
}

// damaged returns a copy of base whose section sec has patch written at
// off (modulo its size) and is cut to at most trunc bytes (0: not cut).
func damaged(base *memObject, sec int, off uint32, patch []byte, trunc uint32) *memObject {
	m := &memObject{order: base.order, hdrs: append([]object.SectionHeader(nil), base.hdrs...), data: append([][]byte(nil), base.data...)}
	d := append([]byte(nil), base.data[sec]...)
	if len(d) > 0 {
		at := int(off % uint32(len(d)))
		copy(d[at:], patch)
	}
	if trunc != 0 && int(trunc) < len(d) {
		d = d[:trunc]
	}
	m.data[sec] = d
	m.hdrs[sec].FileSize = uint64(len(d))
	return m
}

// fuzzInput returns the fuzz bases' object number which, damaged by
// damaged in its target section, and the PCs to look up in it; nil if the
// base has no such section. The targets: the pclntab, the moduledata
// section, read-only data (funcdata and inline trees before Go 1.26).
// which fuzzWasmWhich picks the wasm base, whose linear memory (where all
// three are) every target damages.
func fuzzInput(which, target uint8, off uint32, patch []byte, trunc uint32) (*memObject, []uint64) {
	if which == fuzzWasmWhich {
		base := fuzzBases.wasm
		return damaged(base, base.section(wasmfile.MemoryName), off, patch, trunc), fuzzBases.wasmPCs
	}
	i := int(which) % len(fuzzBases.objs)
	base := fuzzBases.objs[i]
	names := [][]string{{".gopclntab"}, {".go.module", ".noptrdata"}, {".rodata"}}
	for _, n := range names[int(target)%len(names)] {
		if sec := base.section(n); sec >= 0 {
			return damaged(base, sec, off, patch, trunc), fuzzBases.pcs[i]
		}
	}
	return nil, nil
}

// FuzzTable damages the pclntab, moduledata or funcdata of real binaries
// of every layout and checks that building a Table and every lookup either
// work or fail with the promised errors, without panicking or hanging.
func FuzzTable(f *testing.F) {
	loadFuzzBases(f)
	for i := range fuzzBases.objs {
		fuzzseed.Add(f, uint8(i), uint8(0), uint32(0), []byte{}, uint32(0))
		fuzzseed.Add(f, uint8(i), uint8(0), uint32(8), []byte{0xff, 0xff, 0xff, 0x7f}, uint32(0)) // nfunc
		fuzzseed.Add(f, uint8(i), uint8(0), uint32(0), []byte{}, uint32(100000))
		fuzzseed.Add(f, uint8(i), uint8(1), uint32(0x58), []byte{1, 2, 3, 4, 5, 6, 7, 8}, uint32(0))
		fuzzseed.Add(f, uint8(i), uint8(2), uint32(1234), []byte{0x80, 0x80, 0x80}, uint32(0))
	}
	// The Go 1.28-style wasm module: minpc and text of either PC rule,
	// functab entries of the older rule or out of order.
	w := uint8(fuzzWasmWhich)
	u64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	u32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	fuzzseed.Add(f, w, uint8(0), uint32(0), []byte{}, uint32(0))
	fuzzseed.Add(f, w, uint8(0), fuzzBases.wasmMD+mdMinPC*8, u64(0), uint32(0))
	fuzzseed.Add(f, w, uint8(0), fuzzBases.wasmMD+mdMinPC*8, u64(wasmMinPC), uint32(0))
	fuzzseed.Add(f, w, uint8(0), fuzzBases.wasmMD+mdMaxPC*8, u64(wasmHighBit-1), uint32(0))
	fuzzseed.Add(f, w, uint8(0), fuzzBases.wasmMD+mdText*8, u64(wasmHighBit), uint32(0))
	fuzzseed.Add(f, w, uint8(0), fuzzBases.wasmFtab, u32(0x1000), uint32(0))
	fuzzseed.Add(f, w, uint8(0), fuzzBases.wasmFtab+8, u32(0xffffffff), uint32(0))
	fuzzseed.Add(f, w, uint8(0), fuzzBases.wasmFtab, []byte{}, fuzzBases.wasmFtab+12)
	f.Fuzz(func(t *testing.T, which, target uint8, off uint32, patch []byte, trunc uint32) {
		obj, pcs := fuzzInput(which, target, off, patch, trunc)
		if obj == nil {
			return
		}
		tab, err := NewTable(obj)
		if err != nil {
			if !errors.Is(err, ErrCorrupted) && !errors.Is(err, ErrNoTable) {
				t.Fatalf("NewTable: unexpected error %v", err)
			}
			return
		}
		exercise(t, tab, pcs)
		exerciseIndexes(t, tab, pcs)
	})
}

// exerciseIndexes runs the lookups that build an index over the whole
// table (by name, by line) and reads the build info: no panic, and only
// the errors a damaged table may give.
func exerciseIndexes(t *testing.T, tab *Table, pcs []uint64) {
	check := func(err error) {
		if err != nil && !errors.Is(err, ErrCorrupted) && !errors.Is(err, ErrPCNotFound) {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	n := 0
	for range tab.Files() {
		if n++; n > 100 {
			break
		}
	}
	if _, err := tab.BuildInfo(); err != nil && !errors.Is(err, ErrNoBuildInfo) && !errors.Is(err, ErrCorrupted) {
		t.Fatalf("BuildInfo: %v", err)
	}
	if len(pcs) == 0 {
		return
	}
	locs, err := tab.ResolveLocations(pcs[0], nil)
	check(err)
	if err != nil || len(locs) == 0 {
		return
	}
	for _, err := range tab.LookupFunctions(locs[len(locs)-1].Function) {
		check(err)
	}
	lines, err := tab.LinePCs(locs[0].File, locs[0].Line, nil)
	if locs[0].File == "" && errors.Is(err, ErrFileNotFound) {
		err = nil
	}
	check(err)
	if err == nil && len(lines) == 0 && locs[0].File != "" && locs[0].Line > 0 {
		t.Errorf("LinePCs(%s, %d) finds nothing, though %#x is there", locs[0].File, locs[0].Line, pcs[0])
	}
}

// isSubsequence reports whether the bytes of s appear in t in order.
func isSubsequence(s, t string) bool {
	for i := 0; i < len(s); i++ {
		k := strings.IndexByte(t, s[i])
		if k < 0 {
			return false
		}
		t = t[k+1:]
	}
	return true
}

// FuzzParseName takes apart arbitrary names: no panic, and what it
// returns comes from the name.
func FuzzParseName(f *testing.F) {
	for _, s := range []string{"main.main", "net/http.(*Server).Serve.func1", "gopkg.in/yaml%2ev3.(*parser).parse",
		"main.(*Box[go.shape.int]).Map[go.shape.string]", "main.F[go.shape.struct { A int \"json:\\\"a]\\\"\" }]", "type:.eq.[2]string", "main.(*T", "a%zz/b.F"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n := ParseName(name)
		if n.Package == "" && (n.Receiver != "" || n.Pointer) {
			t.Errorf("ParseName(%q) = %+v: a receiver without a package", name, n)
		}
		if !strings.Contains(name, n.Receiver) {
			t.Errorf("ParseName(%q) = %+v: receiver not in the name", name, n)
		}
		if !isSubsequence(n.TypeArgs, name) || !isSubsequence(n.Func, name) {
			t.Fatalf("ParseName(%q) = %+v: type arguments or function not taken from the name", name, n)
		}
		pkg, sym := SymbolName(name)
		if pkg != n.Package {
			t.Errorf("SymbolName(%q) package %q, ParseName %q", name, pkg, n.Package)
		}
		if len(sym) > len(name) {
			t.Errorf("SymbolName(%q) = %q, longer than the name", name, sym)
		}
	})
}

// inlinedSample is a sample PC of the newest fuzz base that lies in a
// function with an inline tree.
type inlinedSample struct {
	pc   uint64
	f    Function
	tree inlineTree
}

// newestInlined returns the newest fuzz base, its Table and its sample PCs
// in functions with inline trees.
func newestInlined(t testing.TB) (*memObject, *Table, []inlinedSample) {
	t.Helper()
	loadFuzzBases(t)
	base := fuzzBases.objs[len(fuzzBases.objs)-1]
	tab, err := NewTable(base)
	if err != nil {
		t.Fatal(err)
	}
	var out []inlinedSample
	for _, pc := range fuzzBases.pcs[len(fuzzBases.pcs)-1] {
		f, err := tab.ResolveFunction(pc)
		if err != nil {
			t.Fatal(err)
		}
		if tree, ok, err := f.inlineTree(); err == nil && ok {
			out = append(out, inlinedSample{pc, f, tree})
		}
	}
	if len(out) == 0 {
		t.Fatal("no function with inlined calls")
	}
	return base, tab, out
}

// TestCyclicInlineTree makes an inlined call's parent PC point back into
// the call itself: the walk to the physical function must end with
// ErrCorrupted.
func TestCyclicInlineTree(t *testing.T) {
	base, tab, samples := newestInlined(t)
	parentPCOff := map[inlKind]uint32{inl112: 16, inl120: 8}[tab.layout.inlKind]
	if parentPCOff == 0 {
		t.Skip("newest base has no parent PCs")
	}
	// Find an inlined PC and the address of its record.
	for _, smp := range samples {
		pc, f, tree := smp.pc, smp.f, smp.tree
		ix := tab.pcvalue(tree.index, f.Entry(), pc)
		if ix < 0 {
			continue
		}
		addr, _ := f.funcdata(tab.layout.funcdataInlTree)
		recAddr := addr + uint64(ix)*uint64(tab.layout.inlRecordSize)
		for sec, h := range base.hdrs {
			if recAddr < h.Addr || recAddr >= h.Addr+uint64(len(base.data[sec])) {
				continue
			}
			var patch [4]byte
			binary.LittleEndian.PutUint32(patch[:], uint32(pc-f.Entry())) // parentPc = pc itself
			m := damaged(base, sec, uint32(recAddr-h.Addr)+parentPCOff, patch[:], 0)
			bad, err := NewTable(m)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bad.ResolveLocations(pc, nil); !errors.Is(err, ErrCorrupted) {
				t.Fatalf("ResolveLocations on a cyclic tree: %v, want ErrCorrupted", err)
			}
			return
		}
	}
	t.Fatal("no inlined PC found to damage")
}

// TestHugeCounts gives the header absurd counts and checks that they are
// rejected before anything is allocated for them: NewTable may allocate no
// more than it does for the undamaged table.
func TestHugeCounts(t *testing.T) {
	loadFuzzBases(t)
	for i, base := range fuzzBases.objs {
		normal := alloctest.Bytes(func() {
			if _, err := NewTable(base); err != nil {
				t.Fatal(err)
			}
		})
		sec := base.section(".gopclntab")
		t.Logf("%s: NewTable allocates %d bytes", fuzzBaseNames[i], normal)
		for _, n := range []uint64{1 << 31, 1 << 40, 1<<64 - 1} {
			var patch [8]byte
			binary.LittleEndian.PutUint64(patch[:], n)
			m := damaged(base, sec, 8, patch[:], 0) // nfunc
			var err error
			allocs := testing.AllocsPerRun(1, func() { _, err = NewTable(m) })
			if !errors.Is(err, ErrCorrupted) {
				t.Errorf("%s: nfunc %#x: NewTable = %v, want ErrCorrupted", fuzzBaseNames[i], n, err)
			}
			if allocs > 100 {
				t.Errorf("%s: nfunc %#x: %v allocations", fuzzBaseNames[i], n, allocs)
			}
			if got := alloctest.Bytes(func() { NewTable(m) }); got > normal+4<<10 {
				t.Errorf("%s: nfunc %#x: NewTable allocated %d bytes, %d for the undamaged table", fuzzBaseNames[i], n, got, normal)
			}
		}
	}
}

// TestManyInlineRecords gives a function an inline index table that claims
// as many records as the bytes after its tree hold, every one a copy of a
// real record. The index puts every call site in the code of the last
// record, so no record's caller comes before it: InlinedCalls and
// InlineFunctions must find the tree corrupt, after passes over all the
// records that are linear or n log n. (They were quadratic once: 0.56 s
// for the 5,983 records of this base, hours for the million a large
// binary has room for.)
func TestManyInlineRecords(t *testing.T) {
	base, tab, samples := newestInlined(t)
	pc, f, tree := samples[0].pc, samples[0].f, samples[0].tree
	if _, ok := f.record(tree, 0); !ok {
		t.Fatal("record 0 does not decode")
	}
	size := uint64(tab.layout.inlRecordSize)
	n := uint64(len(tree.recs)) / size
	// The index table: value n-1 over the whole function.
	var index []byte
	index = binary.AppendUvarint(index, n<<1) // zig-zag delta from -1
	index = binary.AppendUvarint(index, (f.End()-f.Entry())/uint64(tab.hdr.quantum))
	index = append(index, 0)
	m := &memObject{order: base.order, hdrs: base.hdrs}
	for _, d := range base.data {
		orig := d
		d = slices.Clone(d)
		if at, ok := offsetIn(orig, tab.hdr.pctab); ok {
			copy(d[at+uint64(tree.index):], index)
		}
		if at, ok := offsetIn(orig, tree.recs); ok {
			for k := uint64(1); k < n; k++ {
				copy(d[at+k*size:], d[at:at+size])
			}
		}
		m.data = append(m.data, d)
	}
	bad, err := NewTable(m)
	if err != nil {
		t.Fatal(err)
	}
	bf, err := bad.ResolveFunction(pc)
	if err != nil {
		t.Fatal(err)
	}
	calls, err := bf.InlinedCalls(nil)
	if !errors.Is(err, ErrCorrupted) || len(calls) != 0 {
		t.Errorf("InlinedCalls of %s with %d copies of record 0: %d calls, %v", f.Name(), n, len(calls), err)
	}
	inl, err := bf.InlineFunctions(nil)
	if !errors.Is(err, ErrCorrupted) || len(inl) != 0 {
		t.Errorf("InlineFunctions of %s with %d copies of record 0: %v, %v", f.Name(), n, inl, err)
	}
	t.Logf("%s: %d records", f.Name(), n)
}

// offsetIn returns the offset of sub in d, if sub is a slice of d's memory.
func offsetIn(d, sub []byte) (uint64, bool) {
	if len(d) == 0 || len(sub) == 0 {
		return 0, false
	}
	at := uintptr(unsafe.Pointer(&sub[0])) - uintptr(unsafe.Pointer(&d[0]))
	return uint64(at), at < uintptr(len(d))
}
