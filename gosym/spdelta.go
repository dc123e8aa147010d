package gosym

// Frame data (FORMAT.md, "Frame data"): the pcsp table, the arguments size
// and the flags, which the runtime's own unwinder reads.

// SPDelta returns how far f has moved the stack pointer down at pc since its
// entry: the runtime's pcsp value (0 at the entry; the frame size once the
// prologue has run). pc must lie in f. It can be negative in an epilogue
// that pops more than the function pushed (s390x's runtime.asyncPreempt
// ends at -8).
//
// The caller's stack pointer (the canonical frame address of DWARF CFI) is
// SP + SPDelta + the pointer size on 386 and amd64, where the CALL pushed
// the return address, and SP + SPDelta on link-register architectures,
// whose return address is in the link register while SPDelta is 0 and at
// 0(SP) once the prologue has stored it. Table.Unwind applies this.
//
// A function's range [Entry, End) ends at the next function's entry, so
// it includes the alignment padding after the function's code, where no
// instruction runs and the pcsp table says nothing: there SPDelta returns
// ErrPadding, not an error about damage. A function without a pcsp table
// gives ErrNoFrameData. A table that cannot be read gives a *FormatError.
func (f Function) SPDelta(pc uint64) (int32, error) {
	if f.t == nil {
		return 0, ErrPCNotFound
	}
	if f.t.closed.Load() {
		return 0, ErrClosed
	}
	if pc < f.entry || pc >= f.End() {
		return 0, &pcError{pc: pc, f: f.Name()}
	}
	return f.spDelta(pc)
}

// spDelta is SPDelta for a pc known to lie in f.
func (f Function) spDelta(pc uint64) (int32, error) {
	off := f.field(f.t.layout.pcsp)
	if off == 0 {
		return 0, ErrNoFrameData
	}
	it := newPCIter(f.t.hdr.pctab, off, f.entry, f.End(), f.t.hdr.quantum)
	for it.next() {
		if pc < it.hi {
			return it.val, nil
		}
	}
	if it.ended && it.hi > f.entry {
		// The table covers the function's code and ends before pc.
		return 0, ErrPadding
	}
	return 0, f.formatError("pcsp table does not cover the pc")
}

// ArgsSizeUnknown is what ArgsSize returns for a function whose arguments
// size is not recorded (assembly functions declared without one, and
// functions with variadic C-like arguments).
const ArgsSizeUnknown = -0x80000000

// ArgsSize returns the size in bytes of the area of the function's
// arguments and results in its caller's frame, as the compiler recorded it
// (the _func record's args field; the runtime's frame.arglen), or
// ArgsSizeUnknown.
func (f Function) ArgsSize() int32 {
	if f.t == nil {
		return 0
	}
	return int32(f.field(f.t.layout.args))
}

// Function flags (internal/abi.FuncFlag), recorded from Go 1.17.
const (
	flagTopFrame = 1 << 0
	flagSPWrite  = 1 << 1
)

// flags returns the record's flag byte (FORMAT.md, "_func records"): the
// byte after funcID from Go 1.17; 0 before, where it is padding or absent.
func (f Function) flags() uint8 {
	if !f.t.hasFlags() {
		return 0
	}
	return f.rec()[f.t.layout.flags]
}

// hasFlags reports whether the release records function flags (Go 1.17+).
func (t *Table) hasFlags() bool { return t.layout.flags >= 0 }

// SPWrite reports whether the function writes an arbitrary value to the
// stack pointer (it switches stacks: runtime.gogo, runtime.systemstack,
// runtime.mcall, runtime.morestack, assembly that calls C...), so that its
// pcsp table does not say where its caller's frame is from some PC on. The
// runtime's unwinder stops at such a frame unless it is the innermost one
// interrupted in its prologue. Recorded from Go 1.17 (the SPWRITE flag);
// for older releases SPWrite reports the functions Kind classifies as
// KindStackSwitch.
func (f Function) SPWrite() bool {
	if f.t == nil {
		return false
	}
	if f.t.hasFlags() {
		return f.flags()&flagSPWrite != 0
	}
	return f.Kind() == KindStackSwitch
}
