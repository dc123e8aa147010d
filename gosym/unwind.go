package gosym

import (
	"fmt"
	"io"
	"iter"

	"github.com/gosym-dev/gosym/object"
)

// Regs is where an unwind starts: the registers of a stopped thread or
// goroutine. LR is used on link-register architectures (arm, arm64,
// ppc64, s390x, riscv64, mips, loong64); 0 means unknown.
type Regs struct{ PC, SP, LR uint64 }

// Frame is one physical frame found by Unwind.
type Frame struct {
	// PC is the frame's PC as the runtime's traceback prints pc=: the
	// thread's PC for the first frame, a return address for the others,
	// except the frame under a KindTrap function, whose PC is the
	// interrupted instruction itself. Look up PC-1 for a return address
	// (see the package documentation, "Addresses").
	PC uint64
	// SP is the frame's stack pointer, as the traceback prints sp=.
	SP       uint64
	Function Function
}

// maxFrames bounds a walk over hostile memory that never reaches the top.
const maxFrames = 1 << 20

// unwindArch holds what Unwind needs to know of an architecture
// (runtime/internal/sys, later internal/goarch: MinFrameSize, StackAlign).
type unwindArch struct {
	usesLR bool
	// trapBump is how far the signal handler of a link-register machine
	// moves SP down to store LR when it fakes a call to sigpanic
	// (sigctxt.preparePanic, pushCall): alignUp(MinFrameSize, StackAlign).
	trapBump uint64
}

// unwindArchOf returns the unwinding rules for goarch.
func unwindArchOf(goarch string) (unwindArch, bool) {
	switch goarch {
	case "386", "amd64":
		return unwindArch{}, true
	case "arm", "mips", "mipsle":
		return unwindArch{usesLR: true, trapBump: 4}, true
	case "arm64":
		return unwindArch{usesLR: true, trapBump: 16}, true
	case "ppc64", "ppc64le":
		return unwindArch{usesLR: true, trapBump: 32}, true
	case "s390x", "riscv64", "mips64", "mips64le", "loong64":
		return unwindArch{usesLR: true, trapBump: 8}, true
	}
	return unwindArch{}, false
}

// goarch returns the target's GOARCH, from the object, or else from the
// table's quantum (only 386 and amd64 use 1).
func (t *Table) goarch() string {
	if d, ok := t.obj.(object.Describer); ok && d.Arch() != "" {
		return d.Arch()
	}
	if t.hdr.quantum == 1 {
		if t.hdr.rd.ptrSize == 8 {
			return "amd64"
		}
		return "386"
	}
	return ""
}

// UnwindError reports where an unwind could not go on.
type UnwindError struct {
	PC, SP uint64 // the frame being left, or the frame that could not be made
	Msg    string
	Err    error // the underlying error (a read of mem, a symbol table error), or nil
}

func (e *UnwindError) Error() string {
	s := fmt.Sprintf("gosym: unwind at pc %#x sp %#x: %s", e.PC, e.SP, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *UnwindError) Unwrap() error { return e.Err }

// Unwind walks the stack that starts at regs, reading stack memory from
// mem (addresses are the target's virtual addresses: a core file's or a
// live process's), innermost frame first. It uses only the symbol table
// (no frame pointers, no DWARF), so it works on stripped binaries.
//
// It follows the rules of the runtime's own unwinder (runtime/traceback.go)
// for the target's architecture: the caller's SP is SP + SPDelta (plus the
// pushed return address on 386 and amd64); the return address is read at
// the caller's SP minus the pointer size on 386 and amd64, and on
// link-register machines at 0(SP), or taken from regs.LR in an innermost
// function that has not stored it yet (SPDelta 0). Under a KindTrap
// function the frame is the interrupted one, its PC the faulting
// instruction; on link-register machines the signal handler stored that
// frame's LR below it. The walk ends, without an error, after a KindTop
// frame, a frame whose function writes SP (SPWrite; KindStackSwitch for
// releases without the flag), a function without a pcsp table, or a zero
// return address. It ends with an *UnwindError when a PC is in no
// function, mem cannot be read, or the stack does not grow upwards.
//
// Addresses are link-time addresses: for a position-independent
// executable loaded elsewhere, mem and regs must be translated by the
// load bias. The sequence allocates nothing per frame.
func (t *Table) Unwind(regs Regs, mem io.ReaderAt) iter.Seq2[Frame, error] {
	return func(yield func(Frame, error) bool) {
		if t.closed.Load() {
			yield(Frame{PC: regs.PC, SP: regs.SP}, ErrClosed)
			return
		}
		goarch := t.goarch()
		arch, ok := unwindArchOf(goarch)
		if !ok {
			yield(Frame{PC: regs.PC, SP: regs.SP}, &UnwindError{PC: regs.PC, SP: regs.SP,
				Msg: fmt.Sprintf("unwinding %q binaries is not supported", goarch)})
			return
		}
		u := unwinder{t: t, arch: arch, mem: mem, ptr: uint64(t.hdr.rd.ptrSize)}
		u.walk(regs, yield)
	}
}

// unwinder is the state of one walk.
type unwinder struct {
	t    *Table
	arch unwindArch
	mem  io.ReaderAt
	ptr  uint64
	buf  [8]byte
}

// read reads the pointer at addr.
func (u *unwinder) read(addr uint64) (uint64, error) {
	b := u.buf[:u.ptr]
	n, err := u.mem.ReadAt(b, int64(addr))
	if n == len(b) {
		return u.t.hdr.rd.ptr(b), nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return 0, err
}

func (u *unwinder) walk(regs Regs, yield func(Frame, error) bool) {
	pc, sp, lr := regs.PC, regs.SP, regs.LR
	innermost := true
	for n := 0; ; n++ {
		f, err := u.t.ResolveFunction(pc)
		if err != nil {
			yield(Frame{PC: pc, SP: sp}, &UnwindError{PC: pc, SP: sp, Msg: "pc in no function", Err: err})
			return
		}
		fr := Frame{PC: pc, SP: sp, Function: f}
		if f.field(u.t.layout.pcsp) == 0 {
			// No frame information (the runtime's rule: an external
			// function, like race detector support): the walk ends.
			yield(fr, nil)
			return
		}
		d, err := f.spDelta(pc)
		if err != nil {
			yield(fr, &UnwindError{PC: pc, SP: sp, Msg: "no frame size", Err: err})
			return
		}
		if !yield(fr, nil) {
			return
		}
		if u.stopsAt(f) {
			return
		}
		fp := sp + uint64(int64(d))
		var ret uint64
		if u.arch.usesLR {
			if innermost && d > 0 || lr == 0 {
				if ret, err = u.read(sp); err != nil {
					yield(Frame{}, &UnwindError{PC: pc, SP: sp, Msg: fmt.Sprintf("reading the saved LR of %s at %#x", f.Name(), sp), Err: err})
					return
				}
			} else {
				ret = lr
			}
		} else {
			fp += u.ptr
			if ret, err = u.read(fp - u.ptr); err != nil {
				yield(Frame{}, &UnwindError{PC: pc, SP: sp, Msg: fmt.Sprintf("reading the return address of %s at %#x", f.Name(), fp-u.ptr), Err: err})
				return
			}
		}
		if ret == 0 {
			return
		}
		// The stack grows down: a caller's frame is above (an epilogue
		// that popped more than it pushed, d < 0, excepted). Hostile
		// memory that loops is cut at maxFrames.
		if ret == pc && fp == sp || d >= 0 && fp < sp || n == maxFrames {
			yield(Frame{}, &UnwindError{PC: pc, SP: sp, Msg: fmt.Sprintf("stuck: caller pc %#x sp %#x", ret, fp)})
			return
		}
		pc, sp, lr = ret, fp, 0
		innermost = false
		if u.arch.usesLR && f.Kind() == KindTrap {
			// The signal handler stored the interrupted frame's LR
			// below its SP to fake the call (see unwindArch.trapBump).
			x, err := u.read(sp)
			if err != nil {
				yield(Frame{}, &UnwindError{PC: pc, SP: sp, Msg: "reading the LR the signal handler saved", Err: err})
				return
			}
			sp += u.arch.trapBump
			if g, err := u.t.ResolveFunction(pc); err != nil {
				pc = x // interrupted outside Go code: the saved LR leads back
			} else if g.field(u.t.layout.pcsp) != 0 {
				if d, err := g.spDelta(pc); err == nil && d == 0 {
					lr = x
				}
			}
		}
	}
}

// stopsAt reports whether the walk ends after f's frame: the runtime's
// unwinder stops at a TOPFRAME function and at one that writes SP
// (runtime.cgocallback excepted, which keeps both stacks unwindable).
func (u *unwinder) stopsAt(f Function) bool {
	k := f.Kind()
	if k == KindTop {
		return true
	}
	if u.t.hasFlags() {
		return f.flags()&flagSPWrite != 0 && f.Name() != "runtime.cgocallback"
	}
	return k == KindStackSwitch
}
