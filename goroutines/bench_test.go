package goroutines_test

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/elfcore"
	"github.com/gosym-dev/gosym/goroutines"
	"github.com/gosym-dev/gosym/gosym"
)

// regions is a process image made of separate regions.
type regions []*image

func (r regions) ReadAt(p []byte, off int64) (int, error) {
	a := uint64(off)
	i := sort.Search(len(r), func(i int) bool { return r[i].base+uint64(len(r[i].data)) > a })
	if i == len(r) || a < r[i].base {
		return 0, fmt.Errorf("address %#x not in the image", a)
	}
	return r[i].ReadAt(p, off)
}

// manyImage returns an image of the fixture's binary with n goroutines
// parked in runtime.gopark, each with two frames (gopark, goexit), their
// gs and stacks on a heap above the bss.
func manyImage(tb testing.TB, f *fixture, n int) regions {
	bss := &image{base: f.bss, data: make([]byte, f.size)}
	l := f.lay
	const stack = 0x100
	gsize := uint64(l.GSize+15) &^ 15
	heapBase := (f.bss + f.size + 1<<20) &^ (1<<20 - 1)
	heap := &image{base: heapBase, data: make([]byte, uint64(n)*(8+gsize+stack))}
	arr := heapBase
	gs := arr + uint64(n)*8
	stacks := gs + uint64(n)*gsize
	put(bss.data, 0x800, arr)
	put(bss.data, 0x808, uint64(n))
	put(bss.data, 0x810, uint64(n))
	park, err := f.tab.ResolveFunction(f.pc)
	if err != nil {
		tb.Fatal(err)
	}
	d, err := park.SPDelta(f.pc)
	if err != nil {
		tb.Fatal(err)
	}
	exit, err := f.tab.LookupFunction("runtime.goexit")
	if err != nil {
		tb.Fatal(err)
	}
	wait := byte(0)
	for k, s := range l.WaitReasonStrings {
		if s == "chan receive" {
			wait = byte(k)
		}
	}
	for i := 0; i < n; i++ {
		g := gs + uint64(i)*gsize
		put(heap.data, int32(arr-heapBase)+int32(8*i), g)
		b := heap.data[g-heapBase:]
		lo := stacks + uint64(i)*stack
		sp := lo + 0x40
		put(b, l.GGoid, uint64(i+1))
		binary.LittleEndian.PutUint32(b[l.GAtomicStatus:], uint32(goroutines.Waiting))
		b[l.GWaitReason] = wait
		put(b, l.GStackLo, lo)
		put(b, l.GStackHi, lo+stack)
		put(b, l.GSchedSP, sp)
		put(b, l.GSchedPC, f.pc)
		put(heap.data, int32(sp+uint64(d)-heapBase), exit.Entry()+1)
	}
	return regions{bss, heap}
}

// TestMany checks the image of BenchmarkMany: every goroutine listed,
// with its two frames.
func TestMany(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the made-up stacks are laid out for amd64")
	}
	f := openSelf(t)
	img := manyImage(t, f, 1000)
	gs, frames := listAll(t, f, img)
	if gs != 1000 || frames != 2000 {
		t.Errorf("%d goroutines, %d frames; want 1000 and 2000", gs, frames)
	}
}

func listAll(tb testing.TB, f *fixture, img regions) (gs, frames int) {
	p, err := goroutines.New(f.tab, img, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for g, err := range p.All() {
		if err != nil {
			tb.Fatal(err)
		}
		gs++
		for _, err := range p.Frames(g) {
			if err != nil {
				tb.Fatal(err)
			}
			frames++
		}
	}
	return gs, frames
}

// BenchmarkMany lists 100,000 parked goroutines with their frames: New
// (finding the list) and All and Frames over every goroutine.
func BenchmarkMany(b *testing.B) {
	if runtime.GOARCH != "amd64" {
		b.Skip("the made-up stacks are laid out for amd64")
	}
	f := openSelf(b)
	img := manyImage(b, f, 100_000)
	b.ResetTimer()
	for b.Loop() {
		listAll(b, f, img)
	}
}

// TestStackSwitch: a goroutine running on a thread that is on its g0
// stack (in runtime.systemstack, here at its entry) is unwound from its
// saved context, g.sched: the frames the goroutine left, the first one
// reached by a stack switch. A thread whose walk ends elsewhere, off the
// goroutine's stack, is an error that says so; so is a running goroutine
// whose thread is not given (its g.sched is stale).
func TestStackSwitch(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the made-up stacks are laid out for amd64")
	}
	f := openSelf(t)
	img := manyImage(t, f, 1)
	bss, heap := img[0], img[1]
	l := f.lay
	g := binary.LittleEndian.Uint64(heap.data[0:]) // the only g
	gb := heap.data[g-heap.base:]
	binary.LittleEndian.PutUint32(gb[l.GAtomicStatus:], uint32(goroutines.Running))
	m := f.bss + 0x2000
	put(gb, l.GM, m)
	put(bss.data[m-f.bss:], l.MProcid, 4242)
	sys, err := f.tab.LookupFunction("runtime.systemstack")
	if err != nil {
		t.Fatal(err)
	}
	g0sp := f.bss + 0x3000 // a "g0 stack", off the goroutine's
	for _, tc := range []struct {
		pc      uint64
		wantErr string
	}{{sys.Entry(), ""}, {f.pc, "does not reach it"}, {0, "registers are not known"}} {
		threads := []elfcore.Thread{{PID: 4242, PC: tc.pc, SP: g0sp}}
		if tc.pc == 0 {
			threads = nil // a running goroutine without its thread: no stack
		}
		p, err := goroutines.New(f.tab, img, threads)
		if err != nil {
			t.Fatal(err)
		}
		for g, err := range p.All() {
			if err != nil {
				t.Fatal(err)
			}
			if g.Thread != 4242 || g.StatusString != "running" {
				t.Fatalf("thread %d, status %q", g.Thread, g.StatusString)
			}
			var names []string
			var reached []gosym.Reach
			var ferr error
			for fr, err := range p.Frames(g) {
				if err != nil {
					ferr = err
					break
				}
				names = append(names, fr.Func.Name())
				reached = append(reached, fr.Reached)
			}
			if tc.wantErr != "" {
				if ferr == nil || !strings.Contains(ferr.Error(), tc.wantErr) || len(names) > 0 {
					t.Errorf("thread at %#x: frames %v, error %v; want no frame and %q", tc.pc, names, ferr, tc.wantErr)
				}
				continue
			}
			if ferr != nil || !slices.Equal(names, []string{"runtime.gopark", "runtime.goexit"}) || reached[0] != gosym.ReachedStackSwitch {
				t.Errorf("frames %v reached %v, error %v; want gopark (by a stack switch), goexit", names, reached, ferr)
			}
		}
	}
}
