package gosym

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

// TestOpenViewAgrees checks that the checks Open makes on an open view
// (checkGofunc's, and the first record's) answer as on the table itself,
// error for error, on the test program damaged among its first functions:
// a record offset out of the table, or inside it but far from the
// others (no view), a record longer than the view's copy but inside the
// table (no view) or longer than the table, a first record whose entry
// or name offset is wrong, or whose name starts past the view's copy of
// the name table, no inline trees among the first functions (the view
// does not hold the spread samples), and random bytes over the first
// functab entries and records. Where the view holds checkGofunc's
// samples, they are the table's, and each function it holds reads as on
// the table.
func TestOpenViewAgrees(t *testing.T) {
	bin := objtest.Binary(t, objtest.LinuxStripped)
	orig := mustTable(t, bin)
	if orig.hdr.magic != magic120 {
		t.Skipf("magic %#x", orig.hdr.magic)
	}
	off, _, bo := elfPclntab(t, bin)
	funcs := off + uint64(len(orig.data)-len(orig.hdr.funcs)) // file offset of the funcs
	l := orig.layout
	rec := func(i uint64) uint64 { // file offset of record i
		o, _ := orig.funcOffAt(i)
		return funcs + o
	}
	window := uint64(gofuncWindow * quickSample)
	nameBeyond := uint32(0) // a name offset past the view's copy of the name table
	for i := range orig.hdr.nfunc {
		if o, ok := orig.funcOffAt(i); ok {
			if n := bo.Uint32(orig.hdr.funcs[o+uint64(l.nameOff):]); n > openNamesMax {
				nameBeyond = n
				break
			}
		}
	}
	tree := uint64(0) // the first function with an inline tree
	for i := range window {
		if f, ok := orig.recordAt(i); ok && f.pcdata(l.pcdataInlIndex) != 0 {
			tree = i
			break
		}
	}
	mutations := map[string]func(b []byte){
		"offset out of the table": func(b []byte) { bo.PutUint32(b[funcs+3*8+4:], 0xffffff00) },
		"offset far from the others": func(b []byte) {
			o, _ := orig.funcOffAt(orig.hdr.nfunc - 1)
			bo.PutUint32(b[funcs+5*8+4:], uint32(o))
		},
		"record longer than the copy":  func(b []byte) { bo.PutUint32(b[rec(tree)+uint64(l.npcdata):], 10000) },
		"record longer than the table": func(b []byte) { bo.PutUint32(b[rec(tree)+uint64(l.npcdata):], 0x0fffffff) },
		"first entry offset":           func(b []byte) { b[rec(0)] ^= 1 },
		"first name offset":            func(b []byte) { bo.PutUint32(b[rec(0)+uint64(l.nameOff):], uint32(len(orig.hdr.names)+5)) },
		"first name beyond the copy":   func(b []byte) { bo.PutUint32(b[rec(0)+uint64(l.nameOff):], nameBeyond) },
		"no trees among the first": func(b []byte) {
			for i := range window {
				o, _ := orig.funcOffAt(i)
				if uint64(l.pcdataInlIndex) < uint64(bo.Uint32(orig.hdr.funcs[o+uint64(l.npcdata):])) {
					bo.PutUint32(b[funcs+o+uint64(l.fixedSize+4*l.pcdataInlIndex):], 0)
				}
			}
		},
	}
	r := rand.New(rand.NewPCG(26, 3))
	end := rec(window + 1)
	for i := range 300 {
		mutations["random "+string(rune('a'+i%26))+string(rune('a'+i/26))] = func(b []byte) {
			for range 1 + r.IntN(4) {
				b[funcs+r.Uint64N(end-funcs)] = byte(r.Uint32())
			}
		}
	}
	views, agreed := 0, 0
	for name, m := range mutations {
		b := slices.Clone(bin)
		m(b)
		obj, err := object.NewBytes(b)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := locate(obj, new(openBuf))
		if err != nil {
			continue
		}
		buf := new(openBuf)
		v := tab.openView(buf, min(tab.hdr.nfunc, window), false)
		if v != nil {
			views++
		}
		// Each function the view holds reads as on the table.
		for i := uint64(0); v != nil && i < v.views; i++ {
			vf, vok := v.recordAt(i)
			tf, tok := tab.recordAt(i)
			if vok != tok || vok && (vf.Entry() != tf.Entry() || vf.End() != tf.End() || vf.pcdata(l.pcdataInlIndex) != tf.pcdata(l.pcdataInlIndex)) {
				t.Errorf("%s: function %d on the view: %v; on the table: %v", name, i, vok, tok)
				break
			}
			if !vok {
				continue
			}
			va, vok := vf.funcdata(l.funcdataInlTree)
			ta, tok := tf.funcdata(l.funcdataInlTree)
			if va != ta || vok != tok {
				t.Errorf("%s: function %d's inline tree at %#x, %v on the view; at %#x, %v on the table", name, i, va, vok, ta, tok)
				break
			}
		}
		// The view's samples, where it holds them, are the table's.
		var vb, tb [4 * validateSample]gofuncSample
		if vs, ok := v.gofuncSamples(&vb); ok {
			if ts, _ := tab.gofuncSamples(&tb); !slices.Equal(vs, ts) {
				t.Errorf("%s: the view samples %v, the table %v", name, vs, ts)
			}
		}
		want, got := tab.checkGofuncOn(nil), tab.checkGofuncOn(v)
		if (want == nil) != (got == nil) || want != nil && want.Error() != got.Error() {
			t.Errorf("%s: checkGofunc on the view: %v; on the table: %v", name, got, want)
		}
		// The first record's check on checkGofunc's view, and on a view
		// of the first entry.
		_, _, want = tab.checkRecord(0)
		for _, view := range []*Table{v, nil} { // v first: a view of the first entry overwrites its copies
			buf.view = view
			got = tab.checkFirstRecord(buf)
			if (want == nil) != (got == nil) || want != nil && want.Error() != got.Error() {
				t.Errorf("%s: the first record's check on the view (checkGofunc's: %v): %v; on the table: %v", name, view != nil, got, want)
			}
		}
		agreed++
	}
	if views < len(mutations)/2 {
		t.Errorf("%d views made for %d damaged tables", views, len(mutations))
	}
	t.Logf("%d damaged tables opened, %d with a view", agreed, views)
}
