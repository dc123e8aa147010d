package goroutines_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"os"
	"runtime"
	"testing"

	"github.com/gosym-dev/gosym/goroutines"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/rtlayout"
)

// image is a made-up process image of the test binary: memory at base.
type image struct {
	base uint64
	data []byte
}

func (m *image) ReadAt(p []byte, off int64) (int, error) {
	a := uint64(off)
	if a < m.base || a-m.base >= uint64(len(m.data)) {
		return 0, fmt.Errorf("address %#x not in the image", a)
	}
	n := copy(p, m.data[a-m.base:])
	if n < len(p) {
		return n, fmt.Errorf("address %#x: short", a)
	}
	return n, nil
}

// fixture is the test binary's table, its layout, and where its bss is.
type fixture struct {
	tab       *gosym.Table
	lay       *rtlayout.Layout
	bss, size uint64
	pc        uint64 // a PC in runtime.gopark, for saved contexts
}

func openSelf(t testing.TB) *fixture {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("made-up images of the test binary are laid out for linux/amd64 and arm64")
	}
	lay, ok := rtlayout.Lookup(runtime.Version(), runtime.GOARCH)
	if !ok {
		t.Skipf("no layout for %s", runtime.Version())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	tab, err := gosym.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close() })
	secs, err := tab.Object().Sections()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{tab: tab, lay: lay}
	for _, s := range secs {
		if s.Name == ".bss" {
			f.bss, f.size = s.Addr, s.Size
		}
	}
	if f.size < 0x18000 {
		t.Skipf("bss of %#x bytes: too small for the made-up image", f.size)
	}
	fn, err := tab.LookupFunction("runtime.gopark")
	if err != nil {
		t.Fatal(err)
	}
	f.pc = fn.Entry() + 1
	return f
}

// put writes a pointer-sized or 64-bit word.
func put(b []byte, off int32, v uint64) { binary.LittleEndian.PutUint64(b[off:], v) }

// goodImage returns an image of the fixture's bss holding a list of n
// goroutines at list (ids 1..n, waiting in "sleep" or status 1) whose
// array is at arr, their gs at gs, their stacks from stacks on.
func (f *fixture) goodImage(n int, extra ...uint64) *image {
	m := &image{base: f.bss, data: make([]byte, f.size)}
	arr, gs, stacks := f.bss+0x1000, f.bss+0x4000, f.bss+0x10000
	total := uint64(n + len(extra))
	put(m.data, 0x800, arr)
	put(m.data, 0x808, total)
	put(m.data, 0x810, total)
	l := f.lay
	for i := 0; i < n; i++ {
		g := gs + uint64(i)*uint64(l.GSize)
		put(m.data, int32(arr-f.bss)+int32(8*i), g)
		b := m.data[g-f.bss:]
		lo := stacks + uint64(i)*0x400
		put(b, l.GGoid, uint64(i+1))
		binary.LittleEndian.PutUint32(b[l.GAtomicStatus:], uint32(goroutines.Waiting))
		put(b, l.GStackLo, lo)
		put(b, l.GStackHi, lo+0x400)
		put(b, l.GSchedSP, lo+0x300)
		put(b, l.GSchedPC, f.pc)
		for k, s := range l.WaitReasonStrings {
			if s == "sleep" {
				b[l.GWaitReason] = byte(k)
			}
		}
	}
	for i, p := range extra {
		put(m.data, int32(arr-f.bss)+int32(8*(n+i)), p)
	}
	return m
}

// TestHostileList: a list whose first entries check out and whose others
// are garbage (nil, misaligned, unreadable, a duplicate, an impossible
// status) is a partial answer: the good goroutines, and a *GError for
// each bad entry, never a panic.
func TestHostileList(t *testing.T) {
	f := openSelf(t)
	gs := f.bss + 0x4000
	bogus := f.bss + 0x3000 // a g with status 0x77
	m := f.goodImage(16, 0, gs+1, 1<<62, gs, bogus)
	binary.LittleEndian.PutUint32(m.data[bogus-f.bss+uint64(f.lay.GAtomicStatus):], 0x77)
	p, err := goroutines.New(f.tab, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	good, bad := 0, 0
	for g, err := range p.All() {
		if err != nil {
			var ge *goroutines.GError
			if !errors.As(err, &ge) {
				t.Errorf("error %v is no *GError", err)
			}
			t.Log(err)
			bad++
			continue
		}
		if g.StatusString != "sleep" {
			t.Errorf("goroutine %d: status %q, want sleep", g.ID, g.StatusString)
		}
		good++
		n := 0
		for _, err := range p.Frames(g) {
			if n++; n > 1000 || err != nil {
				break
			}
		}
	}
	if good != 16 || bad != 5 {
		t.Errorf("%d goroutines and %d damaged entries, want 16 and 5", good, bad)
	}
}

// TestHostileLength: a list claiming 2^26 entries in an image that holds
// few ends after maxDamaged bad entries in a row, not after 2^26.
func TestHostileLength(t *testing.T) {
	f := openSelf(t)
	m := f.goodImage(16)
	put(m.data, 0x808, 1<<26)
	put(m.data, 0x810, 1<<26)
	p, err := goroutines.New(f.tab, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	yields := 0
	for range p.All() {
		yields++
	}
	if yields > 16+64+1 {
		t.Errorf("%d entries yielded from a list of 16 good ones and zeros", yields)
	}
}

// TestNotAGoProcess: an image without a list that checks out (zeros, a
// list whose first goroutine is not goroutine 1, one with a bad stack) is
// an error wrapping ErrNotFound.
func TestNotAGoProcess(t *testing.T) {
	f := openSelf(t)
	cases := map[string]func(*image){
		"zeros":      func(m *image) { clear(m.data) },
		"no main":    func(m *image) { put(m.data[0x4000:], f.lay.GGoid, 7) },
		"bad stack":  func(m *image) { put(m.data[0x4000:], f.lay.GStackHi, 1) },
		"sp outside": func(m *image) { put(m.data[0x4000:], f.lay.GSchedSP, 1<<40) },
	}
	for name, damage := range cases {
		m := f.goodImage(4)
		damage(m)
		if _, err := goroutines.New(f.tab, m, nil); !errors.Is(err, goroutines.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
}

// TestUnknownRelease: releases without a layout are refused.
func TestUnknownRelease(t *testing.T) {
	for _, v := range []string{"go1.11.13", "go1.99", "devel +abc", ""} {
		if _, ok := rtlayout.Lookup(v, "amd64"); ok {
			t.Errorf("a layout for %q", v)
		}
	}
	if _, ok := rtlayout.Lookup("go1.21.13", "amd64"); !ok {
		t.Error("no layout for go1.21.13")
	}
}

// FuzzGoroutines reads made-up images of the test binary's bss: the bytes
// at the list's array and gs replaced by the input. Nothing may panic or
// loop: All yields at most the list's length plus one, each goroutine's
// frames end.
func FuzzGoroutines(f *testing.F) {
	fx := openSelf(f)
	good := fx.goodImage(16)
	fuzzseed.Add(f, good.data[0x800:0x6000])
	fuzzseed.Add(f, make([]byte, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := fx.goodImage(0)
		copy(m.data[0x800:], data[:min(len(data), len(m.data)-0x800)])
		p, err := goroutines.New(fx.tab, m, nil)
		if err != nil {
			return
		}
		yields := 0
		for g, err := range p.All() {
			if yields++; yields > p.Len()+1 {
				t.Fatalf("more than %d entries yielded", p.Len()+1)
			}
			if err != nil {
				continue
			}
			n := 0
			for _, err := range p.Frames(g) {
				if n++; err != nil || n > 1<<16 {
					break
				}
			}
		}
	})
}
