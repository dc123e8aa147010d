// Package goroutines lists the goroutines of a Go process image (a core
// file, or a stopped live process) and unwinds their stacks, from the
// binary's symbol table alone: no DWARF, no symbol table, so it works on
// stripped (-ldflags=-s -w) binaries.
//
// A Process is made from the binary's gosym.Table, the process's memory
// (an io.ReaderAt at the target's virtual addresses, such as an
// elfcore.File) and its threads' registers (elfcore.File.Threads, or the
// registers a debugger read with ptrace):
//
//	p, err := goroutines.New(tab, core, core.Threads)
//	...
//	for g, err := range p.All() {
//		if err != nil {
//			// a damaged entry of the goroutine list: reported, skipped
//			continue
//		}
//		for fr, err := range p.Frames(g) {
//			...
//		}
//	}
//
// # How the runtime's structures are found
//
// The offsets of the fields read in runtime.g and runtime.m (goid,
// atomicstatus, waitreason, sched, syscallsp and syscallpc, stack, m,
// gopc, startpc, parentGoid; procid, curg) come from a table generated,
// for each release from Go 1.12 and each architecture, from that
// release's own DWARF (internal/rtlayout, written by go run
// ./internal/rtlayout/gen), with the strings the runtime prints for each
// status and wait reason. The release is the binary's (Table.GoVersion,
// from its build info); where the binary does not say (a stripped binary
// of Go 1.12), every layout of the architecture is tried and one is used
// only if every one that validates agrees.
//
// The list of all goroutines, runtime.allgs, a slice in the runtime's
// bss, is found without a symbol: the bss sections of the binary are
// scanned for a slice header whose elements are goroutines that check
// out (see below), the first one goroutine 1 (runtime.main's, which the
// runtime creates first). A goroutine's thread is its m's procid.
//
// Everything read is validated against the image before it is used: a
// goroutine's status and wait reason are ones the release has, its stack
// bounds are ordered and at most 1 GB apart, its saved stack pointer is
// within them, goroutine ids are distinct and below 2^48. On an unknown
// release, an architecture without a layout, or when no list validates,
// New returns an error: never a guessed answer. A damaged entry of a list
// that does validate is reported by All as an error for that entry (a
// partial answer), and the walk goes on; reads are bounded by the list's
// length, itself bounded by the image.
//
// # Stacks
//
// Frames unwinds a goroutine with gosym.Table.Unwind. A goroutine that
// is not running starts from the context the runtime saved: g.syscallpc
// and g.syscallsp in a system call, else g.sched (gosym.Regs.Saved), as
// the runtime's own traceback does. A running goroutine starts from its
// thread's registers; the walk crosses the signal frames the thread is
// in (runtime.sigtramp to the interrupted context in the ucontext the
// kernel pushed, on every architecture below), keeps the frames on the
// goroutine's own stack, and where the
// thread runs on its g0 stack (systemstack, mcall, morestack) goes on
// from g.sched, the goroutine's side of the switch. Wherever else the
// thread's walk ends, g.sched is stale (the goroutine has run on since it
// was saved) and Frames ends with an error instead.
//
// # Limits
//
// Releases Go 1.12 to 1.27 on linux, on amd64, arm64, 386, arm, ppc64,
// ppc64le and s390x, each checked against the runtime's own traceback.
// The layouts of mips, mipsle, mips64, mips64le, riscv64 (Go 1.14 on) and
// loong64 (Go 1.19 on) are generated too, so parked goroutines are listed
// there, but their signal frames are not crossed and no oracle has run
// on them. Signal frames are crossed on the first seven when the ucontext the kernel pushed checks out (see
// gosym.ReachedSignal), cgo binaries included; where it does not (a
// handler that is not the runtime's, damaged memory), or where the
// thread's walk ends elsewhere, a running goroutine has no stack: Frames
// says its thread's stack does not reach it.
//
// Of cgo (linux/amd64, Go 1.26 checked): a goroutine blocked in C is
// listed from g.syscallsp, its frames from runtime.cgocall out, as the
// runtime prints it; Go code called back from C goes on through
// runtime.cgocallback to the Go code that called C (systemstack_switch,
// cgocall), or on a thread C created to runtime.goexit. C frames are not
// unwound (nothing describes them): a thread in C code gives an error,
// not a frame. A cgo binary's signal handlers return through the C
// library's restorer, outside Go code; its signal frames are crossed like
// any other's.
//
// Addresses are link-time addresses: a position-independent
// executable's memory must be given relocated by its load bias (the
// caller's job, elfcore's mappings). Dead goroutines (exited, kept for
// reuse, or an extra M's between calls from C) are not listed. A running
// goroutine whose thread's registers are not given has no stack: its
// saved context is stale.
package goroutines

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"

	"github.com/gosym-dev/gosym/elfcore"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/rtlayout"
	"github.com/gosym-dev/gosym/object"
)

// ErrUnsupported is wrapped by New's error when the binary's release or
// architecture has no known layout of the runtime's structures.
var ErrUnsupported = errors.New("goroutines: unsupported release or architecture")

// ErrNotFound is wrapped by New's error when no list of goroutines that
// checks out is found in the image: not a process of this binary, a
// damaged image, or a runtime whose structures differ from the table's.
var ErrNotFound = errors.New("goroutines: no goroutine list found")

// Status is the runtime's status of a goroutine (runtime._Grunnable...),
// without the scan bit.
type Status uint32

// The statuses of the runtime (runtime/runtime2.go).
const (
	Idle      Status = 0
	Runnable  Status = 1
	Running   Status = 2
	Syscall   Status = 3
	Waiting   Status = 4
	Dead      Status = 6
	Copystack Status = 8
	Preempted Status = 9
)

// Goroutine is one goroutine of the image.
type Goroutine struct {
	ID     uint64 // the goroutine id, as tracebacks print it
	Addr   uint64 // the address of its runtime.g
	Status Status
	// StatusString is what the runtime's traceback prints in brackets
	// (before any comma): the wait reason of a waiting goroutine
	// ("chan receive", "select", "sleep", ...), else its status
	// ("running", "runnable", "syscall", ...).
	StatusString string
	WaitReason   string // the wait reason, "" if none
	// Thread is the OS thread id of the M running the goroutine (from
	// its m's procid) while it runs or is in a system call; 0 if none.
	Thread int
	// Regs is the context the runtime saved for it (g.sched, or its
	// system call's PC and SP); Saved is set.
	Regs gosym.Regs
	// StackLo and StackHi bound its stack: [StackLo, StackHi).
	StackLo, StackHi uint64
	// CreatedPC is the return address of the go statement that created
	// it (g.gopc), 0 if none; StartPC its function's entry.
	CreatedPC, StartPC uint64
	// ParentID is the id of the goroutine that created it (Go 1.21 on;
	// 0 if unknown).
	ParentID uint64

	m uint64 // g.m
}

// Process is a Go process image: a binary's table, the memory and the
// threads of a process running it. A Process is safe for concurrent use
// if its memory is.
type Process struct {
	tab     *gosym.Table
	mem     io.ReaderAt
	threads []elfcore.Thread
	lay     *rtlayout.Layout
	ptr     uint64
	order   binary.ByteOrder

	allgs, allglen uint64 // the array of *g and its length
	rel            elfcore.Relocation
}

// maxGoroutines bounds the length of the goroutine list read.
const maxGoroutines = 1 << 26

// maxDamaged is how many damaged entries in a row end the walk of the
// list: past that it is garbage, not a list with a few bad entries.
const maxDamaged = 64

// New finds the goroutines of the process whose memory is mem and whose
// threads are threads, running the binary of tab where it was linked. Its
// error wraps ErrUnsupported or ErrNotFound, or is the error of a read of
// mem.
func New(tab *gosym.Table, mem io.ReaderAt, threads []elfcore.Thread) (*Process, error) {
	return NewRelocated(tab, mem, threads, elfcore.Relocation{})
}

// NewRelocated is New for a process that loaded the binary of tab at rel
// (a position-independent executable: see elfcore.Image.Relocation). mem
// and threads are the process's, at its run-time addresses; the
// Process's goroutines and frames speak tab's link-time addresses (rel.ToRun
// gives the addresses the process had).
func NewRelocated(tab *gosym.Table, mem io.ReaderAt, threads []elfcore.Thread, rel elfcore.Relocation) (*Process, error) {
	in := tab.Info()
	if rel.Bias != 0 {
		mem = rel.View(mem, in.PtrSize, tab.Object().Endian())
		threads = slices.Clone(threads)
		for i := range threads {
			threads[i].PC, threads[i].LR = rel.ToLink(threads[i].PC), rel.ToLink(threads[i].LR)
		}
	}
	goarch := ""
	if d, ok := tab.Object().(object.Describer); ok {
		goarch = d.Arch()
	}
	p := &Process{tab: tab, mem: mem, threads: threads, ptr: uint64(in.PtrSize), order: tab.Object().Endian(), rel: rel}
	if p.ptr != 4 && p.ptr != 8 {
		return nil, fmt.Errorf("%w: pointer size %d", ErrUnsupported, p.ptr)
	}
	bss, err := bssRanges(tab.Object())
	if err != nil {
		return nil, err
	}
	version := tab.GoVersion()
	var layouts []*rtlayout.Layout
	if version != "" {
		l, ok := rtlayout.Lookup(version, goarch)
		if !ok {
			return nil, fmt.Errorf("%w: %s on %s", ErrUnsupported, version, goarch)
		}
		layouts = append(layouts, l)
	} else {
		for i := range rtlayout.Layouts {
			if l := &rtlayout.Layouts[i]; l.GOARCH == goarch && pclntabOf(l.Release) == in.Version {
				layouts = append(layouts, l)
			}
		}
		if len(layouts) == 0 {
			return nil, fmt.Errorf("%w: unknown release on %s", ErrUnsupported, goarch)
		}
	}
	var found *Process
	var lastErr error
	for _, l := range layouts {
		q := *p
		q.lay = l
		if err := q.findAllgs(bss); err != nil {
			lastErr = err
			continue
		}
		if found != nil && (found.allgs != q.allgs || !sameG(found.lay, q.lay)) {
			return nil, fmt.Errorf("%w: the binary does not say its release, and the layouts of %s and %s both fit", ErrNotFound, found.lay.Release, l.Release)
		}
		if found == nil {
			found = &q
		}
	}
	if found == nil {
		return nil, lastErr
	}
	return found, nil
}

// pclntabOf returns the pclntab layout (gosym.Info.Version) a release
// writes.
func pclntabOf(release string) string {
	switch {
	case rtlayout.Less(release, "go1.16"):
		return "1.2"
	case rtlayout.Less(release, "go1.18"):
		return "1.16"
	case rtlayout.Less(release, "go1.20"):
		return "1.18"
	}
	return "1.20"
}

// sameG reports whether two layouts read the fields of a g and an m
// alike.
func sameG(a, b *rtlayout.Layout) bool {
	x, y := *a, *b
	x.Release, y.Release = "", ""
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// Release returns the release whose layout is used ("go1.21").
func (p *Process) Release() string { return p.lay.Release }

// Len returns the length of the runtime's list of goroutines (dead ones
// included, which All leaves out).
func (p *Process) Len() int { return int(p.allglen) }

// bssRanges returns the sections of obj where runtime.allgs is: the bss
// (a zero-initialized variable holding pointers: not the noptrbss), or
// where the sections are not named, every zero-filled writable one.
func bssRanges(obj object.Object) ([][2]uint64, error) {
	secs, err := obj.Sections()
	if err != nil {
		return nil, err
	}
	var named, zero, writable [][2]uint64
	for _, s := range secs {
		if s.Flags&object.SectionWrite == 0 || s.Flags&object.SectionExec != 0 || s.Size == 0 {
			continue
		}
		r := [2]uint64{s.Addr, s.Addr + s.Size}
		writable = append(writable, r)
		if s.FileSize == 0 {
			zero = append(zero, r)
			if s.Name == ".bss" || s.Name == "__bss" {
				named = append(named, r)
			}
		}
	}
	for _, out := range [][][2]uint64{named, zero, writable} {
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, fmt.Errorf("%w: the binary has no writable data", ErrNotFound)
}

// findAllgs scans the bss ranges for runtime.allgs: a slice header
// (array, len, cap) whose first elements are valid goroutines, the
// first one goroutine 1.
func (p *Process) findAllgs(bss [][2]uint64) error {
	const chunk = 64 << 10
	buf := make([]byte, chunk+2*8)
	w := p.ptr
	var hits [][2]uint64
	var c checker
	for _, r := range bss {
		lo := (r[0] + w - 1) &^ (w - 1)
		for a := lo; a+3*w <= r[1]; a += chunk {
			n := min(uint64(len(buf)), r[1]-a)
			n -= n % w
			got, _ := p.mem.ReadAt(buf[:n], int64(a))
			got -= got % int(w)
			for i := 0; i+3*int(w) <= got && uint64(i) < chunk; i += int(w) {
				arr, ln, cp := p.link(p.word(buf[i:])), p.word(buf[i+int(w):]), p.word(buf[i+2*int(w):])
				if arr == 0 || arr%w != 0 || ln == 0 || ln > cp || cp > maxGoroutines {
					continue
				}
				if p.checkList(&c, arr, ln) {
					hits = append(hits, [2]uint64{arr, ln})
					if len(hits) > 1 {
						return fmt.Errorf("%w: more than one list of goroutines fits (%#x, %#x) with the layout of %s", ErrNotFound, hits[0][0], hits[1][0], p.lay.Release)
					}
				}
			}
		}
	}
	if len(hits) == 0 {
		return fmt.Errorf("%w: no list of goroutines in the binary's bss fits the layout of %s on %s", ErrNotFound, p.lay.Release, p.lay.GOARCH)
	}
	p.allgs, p.allglen = hits[0][0], hits[0][1]
	return nil
}

// checker holds the buffers of checkList.
type checker struct {
	ptrs []byte
	g    []byte
	ids  []uint64
}

// checkList reports whether the ln pointers at arr look like allgs: the
// first is goroutine 1, the first few are valid goroutines with distinct
// ids.
func (p *Process) checkList(c *checker, arr, ln uint64) bool {
	n := min(ln, 16)
	if c.ptrs == nil {
		c.ptrs, c.g = make([]byte, 16*p.ptr), make([]byte, p.lay.GSize)
	}
	ptrs := c.ptrs[:n*p.ptr]
	if got, _ := p.mem.ReadAt(ptrs, int64(arr)); uint64(got) != n*p.ptr {
		return false
	}
	c.ids = c.ids[:0]
	for i := uint64(0); i < n; i++ {
		g, err := p.readG(p.link(p.word(ptrs[i*p.ptr:])), c.g)
		if err != nil || slices.Contains(c.ids, g.ID) || i == 0 && (g.ID != 1 || p.dead(g.Status)) {
			return false
		}
		c.ids = append(c.ids, g.ID)
	}
	return true
}

func (p *Process) word(b []byte) uint64 {
	if p.ptr == 4 {
		return uint64(p.order.Uint32(b))
	}
	return p.order.Uint64(b)
}

// field reads the word at off of b, 0 if off is negative.
func (p *Process) field(b []byte, off int32) uint64 {
	if off < 0 || int(off)+int(p.ptr) > len(b) {
		return 0
	}
	return p.word(b[off:])
}

// u64 reads the 64-bit field at off (goid, parentGoid) of b.
// code returns the pointer at off in b at its link-time address (see
// NewRelocated): an address of code, or of the executable's data (m0,
// g0), which mem is read at.
func (p *Process) code(b []byte, off int32) uint64 { return p.link(p.field(b, off)) }

// link returns the pointer v, read from the image, at its link-time
// address: v itself for a pointer outside the executable (the heap, the
// stacks) or a binary loaded where it was linked.
func (p *Process) link(v uint64) uint64 { return p.rel.ToLink(v) }

func (p *Process) u64(b []byte, off int32) uint64 {
	if off < 0 || int(off)+8 > len(b) {
		return 0
	}
	return p.order.Uint64(b[off:])
}

// GError reports a goroutine of the list that does not check out.
type GError struct {
	Index int    // its index in the runtime's list
	Addr  uint64 // the address of its g
	Msg   string
	Err   error // the read of memory that failed, or nil
}

func (e *GError) Error() string {
	s := fmt.Sprintf("goroutines: entry %d of the goroutine list (g at %#x): %s", e.Index, e.Addr, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *GError) Unwrap() error { return e.Err }

// readG reads and validates the g at addr into buf (GSize bytes).
func (p *Process) readG(addr uint64, buf []byte) (Goroutine, error) {
	l := p.lay
	g := Goroutine{Addr: addr}
	if addr == 0 || addr%p.ptr != 0 {
		return g, &GError{Addr: addr, Msg: "misaligned or nil pointer"}
	}
	if n, err := p.mem.ReadAt(buf, int64(addr)); n != len(buf) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return g, &GError{Addr: addr, Msg: "unreadable", Err: err}
	}
	raw := p.order.Uint32(buf[l.GAtomicStatus:])
	st := Status(raw &^ 0x1000) // _Gscan
	g.Status = st
	if int(st) >= len(l.GStatusStrings) || l.GStatusStrings[st] == "" {
		return g, &GError{Addr: addr, Msg: fmt.Sprintf("status %#x unknown to %s", raw, l.Release)}
	}
	g.StatusString = l.GStatusStrings[st]
	g.ID = p.u64(buf, l.GGoid)
	if g.ID >= 1<<48 {
		return g, &GError{Addr: addr, Msg: fmt.Sprintf("goroutine id %d out of range", g.ID)}
	}
	if p.dead(st) {
		return g, nil
	}
	if g.ID == 0 {
		return g, &GError{Addr: addr, Msg: "goroutine id 0 in the list"}
	}
	wr := buf[l.GWaitReason]
	if int(wr) >= len(l.WaitReasonStrings) {
		return g, &GError{Addr: addr, Msg: fmt.Sprintf("wait reason %d unknown to %s", wr, l.Release)}
	}
	g.WaitReason = l.WaitReasonStrings[wr]
	if st == Waiting && g.WaitReason != "" {
		g.StatusString = g.WaitReason
	}
	g.StackLo, g.StackHi = p.field(buf, l.GStackLo), p.field(buf, l.GStackHi)
	if g.StackLo > g.StackHi || g.StackHi-g.StackLo > 1<<30 || (g.StackHi == 0 && st != Idle) {
		return g, &GError{Addr: addr, Msg: fmt.Sprintf("stack [%#x, %#x) out of order or too large", g.StackLo, g.StackHi)}
	}
	g.Regs = gosym.Regs{PC: p.code(buf, l.GSchedPC), SP: p.field(buf, l.GSchedSP), LR: p.code(buf, l.GSchedLR), Saved: true}
	if sp := p.field(buf, l.GSyscallSP); sp != 0 {
		g.Regs = gosym.Regs{PC: p.code(buf, l.GSyscallPC), SP: sp, Saved: true}
	}
	if st != Running && st != Idle && (g.Regs.SP < g.StackLo || g.Regs.SP > g.StackHi) {
		return g, &GError{Addr: addr, Msg: fmt.Sprintf("saved sp %#x outside its stack [%#x, %#x)", g.Regs.SP, g.StackLo, g.StackHi)}
	}
	g.m = p.code(buf, l.GM)
	g.CreatedPC, g.StartPC = p.code(buf, l.GGopc), p.code(buf, l.GStartPC)
	g.ParentID = p.u64(buf, l.GParentGoid)
	return g, nil
}

// deadExtra is what the runtime prints for _Gdeadextra (Go 1.26 on): the
// goroutine of an extra M (the M a thread created by C borrows to call
// Go) while no call is in progress. Older releases keep it _Gdead.
const deadExtra = "waiting for cgo callback"

// dead reports whether st is a status of a goroutine that does not run
// (dead, or an extra M's between calls from C), which the runtime's
// traceback leaves out, and so does All.
func (p *Process) dead(st Status) bool {
	return st == Dead || p.lay.GStatusStrings[st] == deadExtra
}

// All yields every goroutine of the image that is not dead, in the order
// of the runtime's list. An entry that does not check out (unreadable,
// or with impossible fields) is yielded as a *GError, and the walk goes
// on; a list whose memory cannot be read ends with an error.
func (p *Process) All() iter.Seq2[Goroutine, error] {
	return func(yield func(Goroutine, error) bool) {
		const batch = 512
		ptrs := make([]byte, batch*p.ptr)
		gbuf := make([]byte, p.lay.GSize)
		mbuf := make([]byte, max(p.lay.MProcid, p.lay.MCurg)+8)
		seen := make(map[uint64]int)
		bad := 0 // damaged entries in a row
		for i := uint64(0); i < p.allglen; i += batch {
			n := min(batch, p.allglen-i)
			if got, err := p.mem.ReadAt(ptrs[:n*p.ptr], int64(p.allgs+i*p.ptr)); uint64(got) != n*p.ptr {
				yield(Goroutine{}, &GError{Index: int(i), Addr: p.allgs + i*p.ptr, Msg: "the goroutine list is unreadable here", Err: err})
				return
			}
			for j := uint64(0); j < n; j++ {
				g, err := p.readG(p.link(p.word(ptrs[j*p.ptr:])), gbuf)
				if err == nil {
					if k, dup := seen[g.ID]; dup && !p.dead(g.Status) {
						err = &GError{Addr: g.Addr, Msg: fmt.Sprintf("goroutine id %d already at entry %d", g.ID, k)}
					}
				}
				if err != nil {
					err.(*GError).Index = int(i + j)
					if bad++; bad > maxDamaged {
						yield(g, &GError{Index: int(i + j), Addr: p.allgs + (i+j)*p.ptr, Msg: fmt.Sprintf("%d damaged entries in a row: the rest of the list (%d entries) is not read", maxDamaged, p.allglen-i-j)})
						return
					}
					if !yield(g, err) {
						return
					}
					continue
				}
				bad = 0
				if p.dead(g.Status) {
					continue
				}
				seen[g.ID] = int(i + j)
				if (g.Status == Running || g.Status == Syscall) && g.m != 0 {
					if got, _ := p.mem.ReadAt(mbuf, int64(g.m)); got == len(mbuf) {
						if tid := p.field(mbuf, p.lay.MProcid); tid < 1<<31 {
							g.Thread = int(tid)
						}
					}
				}
				if !yield(g, nil) {
					return
				}
			}
		}
	}
}

// thread returns the thread whose id is tid.
func (p *Process) thread(tid int) (elfcore.Thread, bool) {
	for _, th := range p.threads {
		if th.PID == tid {
			return th, true
		}
	}
	return elfcore.Thread{}, false
}

// Frames yields the physical frames of g's stack, innermost first (see
// the package documentation, "Stacks"). The walk is gosym.Table.Unwind's:
// it ends with an error where the stack cannot be followed, and it is
// bounded by the memory it reads. A running goroutine whose thread is not
// among the Process's threads yields only an error.
func (p *Process) Frames(g Goroutine) iter.Seq2[gosym.StackFrame, error] {
	if g.Status != Running {
		return p.tab.Unwind(g.Regs, p.mem)
	}
	th, onThread := p.thread(g.Thread)
	if !onThread || g.Thread == 0 {
		// Its saved context is stale: where it is now is in its
		// thread's registers only.
		id, tid := g.ID, g.Thread
		return func(yield func(gosym.StackFrame, error) bool) {
			yield(gosym.StackFrame{}, fmt.Errorf("goroutines: goroutine %d is running on thread %d, whose registers are not known: stack unavailable", id, tid))
		}
	}
	return p.runningFrames(g, th)
}

// runningFrames is Frames for a goroutine running on thread th.
func (p *Process) runningFrames(g Goroutine, th elfcore.Thread) iter.Seq2[gosym.StackFrame, error] {
	return func(yield func(gosym.StackFrame, error) bool) {
		// From the thread's registers: keep the frames on the
		// goroutine's stack (not those of the signal handler on the
		// gsignal stack, nor those on g0).
		onStack := func(sp uint64) bool { return sp >= g.StackLo && sp < g.StackHi }
		onG := false
		var last gosym.StackFrame
		var walkErr error // why the thread's walk stopped, if it did
		for fr, err := range p.tab.Unwind(gosym.Regs{PC: th.PC, SP: th.SP, LR: th.LR}, p.mem) {
			if err != nil {
				if onG {
					yield(fr, err)
					return
				}
				walkErr = err
				break
			}
			last = fr
			if !onStack(fr.SP) {
				if onG {
					// Back off the goroutine's stack: a
					// switch the walk cannot follow.
					yield(fr, &gosym.UnwindError{PC: fr.PC, SP: fr.SP, Msg: fmt.Sprintf("the walk left goroutine %d's stack [%#x, %#x)", g.ID, g.StackLo, g.StackHi)})
					return
				}
				continue
			}
			onG = true
			if !yield(fr, nil) {
				return
			}
		}
		if onG {
			return
		}
		// The thread runs on its g0 stack for the goroutine
		// (systemstack, mcall, morestack): go on from g.sched.
		// Anywhere else (a signal handler not crossed, the
		// scheduler), g.sched is stale: no stack rather than a wrong
		// one.
		if last.Func.Kind() != gosym.KindStackSwitch {
			msg := fmt.Sprintf("thread %d runs goroutine %d, but its stack does not reach it (ends in %s)", th.PID, g.ID, last.Func.Name())
			if last.Func.Name() == "" {
				// Not one frame: the thread runs code outside
				// the binary's functions (C code).
				msg = fmt.Sprintf("thread %d runs goroutine %d, but its stack does not reach it (no frame)", th.PID, g.ID)
			}
			yield(gosym.StackFrame{PC: th.PC, SP: th.SP}, &gosym.UnwindError{PC: th.PC, SP: th.SP, Msg: msg, Err: walkErr})
			return
		}
		first := true
		for fr, err := range p.tab.Unwind(g.Regs, p.mem) {
			if first {
				fr.Reached = gosym.ReachedStackSwitch
				first = false
			}
			if !yield(fr, err) {
				return
			}
		}
	}
}
