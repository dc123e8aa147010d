package gosym

import (
	"fmt"
	"strings"
)

// sigFrame says where, on linux, the kernel's signal frame is relative to
// the runtime's signal handler runtime.sigtramp, and where the
// interrupted registers are in it (the kernel's struct rt_sigframe and
// struct ucontext of arch/*/include/uapi/asm, as Go's
// runtime/defs_linux_*.go copy them).
type sigFrame struct {
	// uc is the offset of the ucontext from the SP the kernel gave the
	// handler (sigtramp's SP plus its SP delta): after the return
	// address it pushed on amd64 (struct rt_sigframe { pretcode; uc;
	// info }), after the 128-byte siginfo on arm64 (struct rt_sigframe
	// { info; uc }).
	uc uint64
	// info is the offset of the siginfo from the ucontext, where it is
	// at a fixed one (arm64: before it); 0 if not. Its si_signo, a
	// signal number, checks that the frame is where it is looked for.
	info int64
	// pc, sp and lr are the offsets of the interrupted PC, SP and link
	// register in the ucontext; lr < 0: none.
	pc, sp, lr int64
}

var (
	// amd64: uc_mcontext at 40 (uc_flags, uc_link, uc_stack), its
	// rsp and rip the 16th and 17th words.
	sigFrameLinuxAMD64 = sigFrame{uc: 8, pc: 40 + 16*8, sp: 40 + 15*8, lr: -1}
	// arm64: uc_mcontext at 176 (uc_flags, uc_link, uc_stack,
	// uc_sigmask, 120 unused bytes, aligned to 16), then fault_address,
	// regs[31] (x30 the LR), sp, pc.
	sigFrameLinuxARM64 = sigFrame{uc: 128, info: -128, pc: 176 + 8 + 32*8, sp: 176 + 8 + 31*8, lr: 176 + 8 + 30*8}
)

// linux reports whether the table's binary is a linux one: an ELF file
// whose runtime has runtime.futex (the BSDs and Solaris have none).
func (t *Table) linux() bool {
	if t.obj == nil {
		return false
	}
	if d, ok := t.obj.(interface{ Format() string }); !ok || d.Format() != "elf" {
		return false
	}
	_, ok, _ := t.findFunction("runtime.futex")
	return ok
}

// isLinux is t.linux(), asked once per walk.
func (u *unwinder) isLinux() bool {
	if u.linux == 0 {
		u.linux = -1
		if u.t.linux() {
			u.linux = 1
		}
	}
	return u.linux > 0
}

// crossSignal moves from the runtime's signal handler, whose SP plus SP
// delta is fp (the SP the kernel gave it), to the context the signal
// interrupted: its PC, SP and LR, read from
// the ucontext the kernel gave the handler.
func (u *unwinder) crossSignal(fp uint64) {
	sf := u.arch.sig
	pc0, sp0 := u.frame.PC, u.frame.SP
	uc, ok := u.findUcontext(fp + sf.uc)
	if !ok {
		u.stop(StackFrame{}, &UnwindError{PC: pc0, SP: sp0,
			Msg: fmt.Sprintf("crossing the signal frame of %s: no ucontext near %#x (frame size unknown, or a foreign signal restorer)", u.frame.Func.Name(), fp+sf.uc)})
		return
	}
	where := func(what string, addr uint64, err error) {
		u.stop(StackFrame{}, &UnwindError{PC: pc0, SP: sp0,
			Msg: fmt.Sprintf("crossing the signal frame of %s: reading the interrupted %s in the ucontext at %#x, at %#x", u.frame.Func.Name(), what, uc, addr), Err: err})
	}
	pc, err := u.read(uc + uint64(sf.pc))
	if err != nil {
		where("pc", uc+uint64(sf.pc), err)
		return
	}
	sp, err := u.read(uc + uint64(sf.sp))
	if err != nil {
		where("sp", uc+uint64(sf.sp), err)
		return
	}
	var lr uint64
	if sf.lr >= 0 {
		if lr, err = u.read(uc + uint64(sf.lr)); err != nil {
			where("lr", uc+uint64(sf.lr), err)
			return
		}
	}
	if pc == 0 {
		u.ok = false
		return
	}
	if pc == pc0 && sp == sp0 || u.n == maxFrames {
		u.stop(StackFrame{}, &UnwindError{PC: pc0, SP: sp0, Msg: fmt.Sprintf("stuck: the signal frame's interrupted context is pc %#x sp %#x", pc, sp)})
		return
	}
	u.n++
	// The interrupted frame is like a thread's first frame: its PC is
	// the instruction itself, and on link-register machines a function
	// that has not stored LR yet has its return address there.
	u.frame = StackFrame{PC: pc, SP: sp, exact: true, Reached: ReachedSignal}
	u.lr, u.innermost = lr, true
	u.resolve()
}

// findUcontext returns the address of the ucontext the kernel gave the
// signal handler, expected at uc. It checks the frame first: on amd64,
// the return address the kernel pushed before the ucontext is the
// runtime's signal restorer (runtime.sigreturn,
// runtime.sigreturn__sigaction); on arm64 the siginfo before it holds a
// signal number and the interrupted SP is 16-byte aligned; uc_flags, the ucontext's first word, is small in every
// case. Where the frame does not check out, the word after and the word
// before are tried (a frame size off by a word); if none does, there is no
// ucontext: a cgo binary, whose restorer is the C library's, or hostile
// memory.
func (u *unwinder) findUcontext(uc uint64) (uint64, bool) {
	sf := u.arch.sig
	for _, d := range [...]int64{0, int64(u.ptr), -int64(u.ptr)} {
		a := uc + uint64(d)
		flags, err := u.read(a)
		if err != nil || flags > 0xff {
			continue
		}
		if sf.info != 0 {
			// The signal number, and the interrupted SP, which
			// arm64 keeps 16-byte aligned.
			signo, err1 := u.read(a + uint64(sf.info))
			sp, err2 := u.read(a + uint64(sf.sp))
			if err1 == nil && err2 == nil && signo&0xffffffff >= 1 && signo&0xffffffff <= 64 && sp != 0 && sp%16 == 0 {
				return a, true
			}
			continue
		}
		ret, err := u.read(a - u.ptr)
		if err != nil {
			continue
		}
		if f, err := u.t.ResolveFunction(ret); err == nil && strings.HasPrefix(f.Name(), "runtime.sigreturn") {
			return a, true
		}
	}
	return 0, false
}
