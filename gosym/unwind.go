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
type Regs struct {
	PC, SP, LR uint64
	// Saved marks the context the runtime saved for a goroutine that is
	// not running (g.sched, or its syscall PC and SP): its PC is the
	// return address of the call that saved it, so the first frame is
	// looked up at PC-1 (StackFrame.LookupPC), as the runtime's traceback
	// does. Unset, PC is the instruction a stopped thread was at.
	Saved bool
}

// StackFrame is one physical frame found by Unwind.
type StackFrame struct {
	// PC is the frame's PC as the runtime's traceback prints pc=: the
	// thread's PC for the first frame, a return address for the others,
	// except the frame under a KindTrap function, whose PC is the
	// interrupted instruction itself. Look up PC-1 for a return address
	// (see the package documentation, "Addresses").
	PC uint64
	// SP is the frame's stack pointer, as the traceback prints sp=.
	SP   uint64
	Func Function // the function whose frame this is
	// Reached says how the walk got to this frame from the one before
	// (inner) it: ReachedCall for a return address, ReachedTrap under a
	// fault or preemption (KindTrap), ReachedSignal through the context
	// a signal handler was given, ReachedStackSwitch from another stack.
	// The first frame is ReachedCall.
	Reached Reach

	// exact is set when PC is the instruction itself rather than a
	// return address: the first frame of a thread's registers, and a
	// frame a trap interrupted.
	exact bool
}

// LookupPC returns the PC to look the frame up at (in ResolveLocations,
// LinePCs...): the runtime's symPC. That is the last instruction the frame
// executed: PC itself in the first frame of a thread's registers and in a
// frame a trap interrupted, and otherwise PC-1, inside the call
// instruction that PC returns to, whose line and inlined calls are the
// frame's. A PC at its function's entry (a frame set up without running
// code, such as runtime.mstart's) is taken as it is.
func (fr StackFrame) LookupPC() uint64 {
	if !fr.exact && fr.PC > fr.Func.Entry() {
		return fr.PC - 1
	}
	return fr.PC
}

// Reach says how an unwind reached a frame from the frame inside it.
type Reach uint8

const (
	// ReachedCall: the inner frame's return address leads here, or
	// this is the first frame.
	ReachedCall Reach = iota
	// ReachedTrap: a fault or a preemption interrupted this frame (the
	// inner frame is a KindTrap function such as runtime.sigpanic); its
	// PC is the interrupted instruction.
	ReachedTrap
	// ReachedSignal: this frame is the context that a signal
	// interrupted, read from the ucontext the kernel gave the runtime's
	// signal handler (runtime.sigtramp); its PC is the interrupted
	// instruction.
	ReachedSignal
	// ReachedStackSwitch: this frame is on another stack than the inner
	// one, found through the runtime's saved context (a goroutine's
	// g.sched, left by systemstack, mcall or morestack).
	ReachedStackSwitch
)

// String returns "call", "trap", "signal" or "stack switch".
func (r Reach) String() string {
	switch r {
	case ReachedCall:
		return "call"
	case ReachedTrap:
		return "trap"
	case ReachedSignal:
		return "signal"
	case ReachedStackSwitch:
		return "stack switch"
	}
	return fmt.Sprintf("Reach(%d)", uint8(r))
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
	// sig is where the kernel's signal frame is on linux, nil where the
	// signal frame is not crossed.
	sig *sigFrame
}

// unwindArchOf returns the unwinding rules for goarch.
func unwindArchOf(goarch string) (unwindArch, bool) {
	switch goarch {
	case "386":
		return unwindArch{sig: &sigFrameLinux386}, true
	case "amd64":
		return unwindArch{sig: &sigFrameLinuxAMD64}, true
	case "arm":
		return unwindArch{usesLR: true, trapBump: 4, sig: &sigFrameLinuxARM}, true
	case "mips", "mipsle":
		return unwindArch{usesLR: true, trapBump: 4}, true
	case "arm64":
		return unwindArch{usesLR: true, trapBump: 16, sig: &sigFrameLinuxARM64}, true
	case "ppc64", "ppc64le":
		return unwindArch{usesLR: true, trapBump: 32, sig: &sigFrameLinuxPPC64}, true
	case "s390x":
		return unwindArch{usesLR: true, trapBump: 8, sig: &sigFrameLinuxS390X}, true
	case "riscv64", "mips64", "mips64le", "loong64":
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
// releases without the flag) but runtime.cgocallback, a function without
// a pcsp table, or a zero return address. runtime.cgocallback, where Go
// code called back from C runs, is crossed as the runtime crosses it: it
// leaves the frame of the Go code that called C (its return address is
// runtime.systemstack_switch's, then runtime.cgocall's) on the
// goroutine's stack. It ends with an *UnwindError when a PC is in no
// function, mem cannot be read, or the stack does not grow upwards.
//
// Addresses are link-time addresses: for a position-independent
// executable loaded elsewhere, mem and regs must be translated by the
// load bias. The sequence allocates nothing per frame.
func (t *Table) Unwind(regs Regs, mem io.ReaderAt) iter.Seq2[StackFrame, error] {
	return func(yield func(StackFrame, error) bool) {
		var u unwinder
		for u.init(t, regs, mem); u.valid(); u.next() {
			if !yield(u.frame, nil) {
				return
			}
		}
		if u.err != nil {
			yield(u.errFrame, u.err)
		}
	}
}

// An unwinder walks the physical frames of one stack, innermost first,
// the way the runtime's unwinder (runtime/traceback.go) does, so that a
// change there can be followed here by comparing two loops of the same
// shape. Its caller's loop:
//
//	var u unwinder
//	for u.init(t, regs, mem); u.valid(); u.next() {
//		// use u.frame
//	}
//	if u.err != nil {
//		// the walk stopped early; u.errFrame is where
//	}
//
// init and next move to a frame and resolve it (its function and frame
// size); valid reports whether there is one. A walk that ends on damaged
// data or unreadable memory leaves the reason in err.
type unwinder struct {
	t    *Table
	arch unwindArch
	mem  io.ReaderAt
	ptr  uint64 // pointer size

	frame StackFrame // the current frame
	lr    uint64     // the link register while the frame is the innermost one or under a trap; 0 if unknown
	// spDelta is the current frame's SP delta at its PC, kind its
	// function's kind.
	spDelta int32
	kind    FuncKind
	// innermost is set for the first frame, whose PC is the thread's own.
	innermost bool
	// last is set when the walk ends after the current frame.
	last bool
	// signal is set when the current frame is the runtime's signal
	// handler entered by the kernel (runtime.sigtramp) and the walk
	// crosses to the context it interrupted.
	signal bool
	// callback is set when the inner frame is runtime.cgocallback's
	// (cgocallback_gofunc's before Go 1.16) in a release without
	// function flags: the current frame is then on the goroutine's
	// stack, where runtime.asmcgocall is not the top (see stopsAt).
	callback bool
	// linux is 1 once the binary is known to be a linux one, -1 once
	// known not to be (asked at the first signal trampoline of a walk).
	linux int8
	n     int // frames so far

	ok       bool       // there is a current frame
	err      error      // why the walk stopped early, or nil
	errFrame StackFrame // the frame err is about: PC and SP, and the function if found
	buf      [8]byte    // a pointer read from mem
}

// init starts the walk at regs.
func (u *unwinder) init(t *Table, regs Regs, mem io.ReaderAt) {
	*u = unwinder{t: t, mem: mem, ptr: uint64(t.hdr.rd.ptrSize)}
	u.frame = StackFrame{PC: regs.PC, SP: regs.SP, exact: !regs.Saved}
	if t.closed.Load() {
		u.stop(u.frame, ErrClosed)
		return
	}
	goarch := t.goarch()
	arch, ok := unwindArchOf(goarch)
	if !ok {
		u.fail(fmt.Sprintf("unwinding %q binaries is not supported", goarch), nil)
		return
	}
	u.arch = arch
	u.lr = regs.LR
	u.innermost = true
	u.resolve()
}

// valid reports whether u is at a frame.
func (u *unwinder) valid() bool { return u.ok }

// resolve finds the current frame's function and frame size; with no
// function or no frame size the walk stops with an error.
func (u *unwinder) resolve() {
	pc, sp := u.frame.PC, u.frame.SP
	f, err := u.t.ResolveFunction(pc)
	if err != nil {
		msg := "pc in no function"
		if u.innermost {
			// The thread's own PC, or the one a signal interrupted,
			// is outside Go code: a thread in a cgo call, the C
			// library's or another binary's code, with no frame
			// information here.
			msg = "the thread runs code the symbol table does not describe (C code, or another binary's): " + msg
		}
		u.fail(msg, err)
		return
	}
	u.frame.Func = f
	if f.field(u.t.layout.pcsp) == 0 {
		// No frame information (the runtime's rule: an external
		// function, like race detector support): the walk ends here.
		u.ok, u.last = true, true
		return
	}
	d, err := f.spDelta(pc)
	if err != nil {
		u.stop(u.frame, &UnwindError{PC: pc, SP: sp, Msg: "no frame size", Err: err})
		return
	}
	u.spDelta, u.kind = d, f.Kind()
	u.ok, u.last = true, u.stopsAt(f, u.kind)
	u.signal = false
	if u.arch.sig != nil {
		if isSigtramp(f.Name()) && u.isLinux() {
			u.signal, u.last = true, false
		}
	}
}

// next moves to the caller of the current frame.
func (u *unwinder) next() {
	if u.last {
		u.ok = false
		return
	}
	pc, sp, f, d := u.frame.PC, u.frame.SP, u.frame.Func, u.spDelta
	fp := sp + uint64(int64(d))
	if u.signal {
		u.crossSignal(fp)
		return
	}
	var ret uint64
	var err error
	if u.arch.usesLR {
		if u.innermost && d > 0 || u.lr == 0 {
			if ret, err = u.read(sp); err != nil {
				u.stop(StackFrame{}, &UnwindError{PC: pc, SP: sp, Msg: fmt.Sprintf("reading the saved LR of %s at %#x", f.Name(), sp), Err: err})
				return
			}
		} else {
			ret = u.lr
		}
	} else {
		fp += u.ptr
		if ret, err = u.read(fp - u.ptr); err != nil {
			u.stop(StackFrame{}, &UnwindError{PC: pc, SP: sp, Msg: fmt.Sprintf("reading the return address of %s at %#x", f.Name(), fp-u.ptr), Err: err})
			return
		}
	}
	if ret == 0 {
		u.ok = false
		return
	}
	// The stack grows down: a caller's frame is above (an epilogue
	// that popped more than it pushed, d < 0, excepted). Hostile
	// memory that loops is cut at maxFrames.
	if ret == pc && fp == sp || d >= 0 && fp < sp || u.n == maxFrames {
		u.stop(StackFrame{}, &UnwindError{PC: pc, SP: sp, Msg: fmt.Sprintf("stuck: caller pc %#x sp %#x", ret, fp)})
		return
	}
	u.n++
	trap := u.kind == KindTrap
	u.frame = StackFrame{PC: ret, SP: fp, exact: trap}
	if trap {
		u.frame.Reached = ReachedTrap
	}
	u.lr, u.innermost = 0, false
	u.callback = false
	if !u.t.hasFlags() {
		name := f.Name()
		u.callback = name == "runtime.cgocallback" || name == "runtime.cgocallback_gofunc"
	}
	if trap && u.arch.usesLR && !u.crossTrap() {
		return
	}
	u.resolve()
}

// crossTrap finishes the step to a frame interrupted by a trap on a
// link-register machine: the signal handler stored the interrupted frame's
// LR below its SP to fake the call (see unwindArch.trapBump). It reports
// false if the walk stopped.
func (u *unwinder) crossTrap() bool {
	x, err := u.read(u.frame.SP)
	if err != nil {
		u.stop(StackFrame{}, &UnwindError{PC: u.frame.PC, SP: u.frame.SP, Msg: "reading the LR the signal handler saved", Err: err})
		return false
	}
	u.frame.SP += u.arch.trapBump
	if g, err := u.t.ResolveFunction(u.frame.PC); err != nil {
		u.frame.PC = x // interrupted outside Go code: the saved LR leads back
		u.frame.exact = false
	} else if g.field(u.t.layout.pcsp) != 0 {
		if d, err := g.spDelta(u.frame.PC); err == nil && d == 0 {
			u.lr = x
		}
	}
	return true
}

// fail stops the walk at the current PC and SP, which no frame could be
// made for.
func (u *unwinder) fail(msg string, err error) {
	u.stop(StackFrame{PC: u.frame.PC, SP: u.frame.SP}, &UnwindError{PC: u.frame.PC, SP: u.frame.SP, Msg: msg, Err: err})
}

// stop ends the walk with err, reported with fr.
func (u *unwinder) stop(fr StackFrame, err error) {
	u.ok, u.err, u.errFrame = false, err, fr
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

// stopsAt reports whether the walk ends after f's frame: the runtime's
// unwinder stops at a TOPFRAME function and at one that writes SP
// (runtime.cgocallback excepted, which keeps both stacks unwindable).
// Before function flags (Go 1.17), it stops at a stack switch, but for
// runtime.asmcgocall on a goroutine's stack (the runtime's topofstack:
// asmcgocall is the top on g0 only): Go code called back from C returns
// through runtime.cgocallback to the asmcgocall frame that the cgo call
// left on the goroutine's stack (its g.sched), and on to runtime.cgocall.
func (u *unwinder) stopsAt(f Function, k FuncKind) bool {
	if k == KindTop {
		return true
	}
	if u.t.hasFlags() {
		return f.flags()&flagSPWrite != 0 && f.Name() != "runtime.cgocallback"
	}
	return k == KindStackSwitch && !(u.callback && f.Name() == "runtime.asmcgocall")
}
