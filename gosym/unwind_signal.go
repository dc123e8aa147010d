package gosym

import (
	"fmt"
	"io"
	"strings"
)

// sigFrame says where, on linux, the kernel's signal frame is relative to
// the runtime's signal handler runtime.sigtramp, and where the
// interrupted registers are in it: the kernel's struct rt_sigframe
// (arch/*/kernel/signal*.c) and struct ucontext (arch/*/include/uapi/asm),
// as Go's runtime/defs_linux_*.go copy them, and qemu-user's copies of
// both (linux-user/*/signal.c), which are the kernel's but for ppc64's
// (see below).
//
// Every ucontext begins with uc_flags, uc_link and uc_stack (a stack_t:
// ss_sp, an int ss_flags, ss_size), each pointer-aligned; the kernel sets
// uc_link to nil and uc_stack to the thread's alternate signal stack, on
// which the runtime's handler runs. Those, and what each architecture's
// frame adds, are checked before the ucontext is used (findUcontext).
type sigFrame struct {
	// base are the offsets from sigtramp's SP plus SP delta (on 386
	// and amd64, where the return address is) at which the SP the
	// kernel gave the handler is looked for, in order: where the
	// pcsp table counts all of sigtramp's frame, the frame top; a word
	// either side; and sigtramp's pushes the table does not count (arm
	// from Go 1.16: MOVM.DB.W [R4-R11], 32 bytes).
	base []int64
	// uc are the offsets of the ucontext from the kernel's SP, tried
	// in order (one but on ppc64).
	uc []int64
	// signo is the offset from the ucontext of a 32-bit signal number
	// the kernel writes in the frame (siginfo's si_signo, or ppc64's
	// sigcontext.signal), 0 if none is checked.
	signo int64
	// selfAt, if not 0, is the offset from the ucontext of a pointer
	// the kernel writes into the frame, to the address selfTo from the
	// ucontext: 386's puc (to the ucontext itself), ppc64's
	// sigcontext.regs (to its gp_regs).
	selfAt, selfTo int64
	// restorer, if not 0, is the offset from the ucontext of the
	// return address the kernel pushed for the handler (386 and
	// amd64): the runtime's signal restorer, runtime.sigreturn or
	// runtime.sigreturn__sigaction, or, in a cgo binary, whose
	// handlers the C library installs, the C library's (__restore_rt),
	// outside every Go function.
	restorer int64
	// spAlign is the alignment of every interrupted SP.
	spAlign uint64
	// pc, sp and lr are the offsets of the interrupted PC, SP and link
	// register in the ucontext; lr < 0: none.
	pc, sp, lr int64
}

var (
	// 386: struct rt_sigframe { pretcode; int sig; pinfo; puc;
	// siginfo (128 bytes); ucontext }, the kernel's SP at pretcode.
	// uc_mcontext (struct sigcontext) at 20: gs, fs, es, ds, edi,
	// esi, ebp, esp (28), ebx, edx, ecx, eax, trapno, err, eip (56).
	sigFrameLinux386 = sigFrame{base: []int64{0, 4, -4}, uc: []int64{16 + 128},
		signo: -128, selfAt: -4 - 128, selfTo: 0, restorer: -16 - 128, spAlign: 4,
		pc: 20 + 56, sp: 20 + 28, lr: -1}
	// amd64: struct rt_sigframe { pretcode; ucontext (304 bytes);
	// siginfo }, the kernel's SP at pretcode; uc_mcontext (struct
	// sigcontext, 32 words) at 40 (uc_flags, uc_link, uc_stack), its
	// rsp and rip the 16th and 17th words; uc_sigmask at 296.
	sigFrameLinuxAMD64 = sigFrame{base: []int64{0, 8, -8}, uc: []int64{8},
		signo: 304, restorer: -8, spAlign: 8,
		pc: 40 + 16*8, sp: 40 + 15*8, lr: -1}
	// arm: struct rt_sigframe { siginfo (128 bytes); struct sigframe {
	// ucontext; retcode } }, the kernel's SP at the siginfo;
	// uc_mcontext (struct sigcontext) at 20: trap_no, error_code,
	// oldmask, r0-r10, fp, ip, sp (64), lr (68), pc (72), cpsr.
	sigFrameLinuxARM = sigFrame{base: []int64{0, 32, 4, -4}, uc: []int64{128},
		signo: -128, spAlign: 4,
		pc: 20 + 72, sp: 20 + 64, lr: 20 + 68}
	// arm64: struct rt_sigframe { siginfo (128 bytes); ucontext }, the
	// kernel's SP at the siginfo; uc_mcontext at 176 (uc_flags,
	// uc_link, uc_stack, uc_sigmask, 120 unused bytes, aligned to 16),
	// then fault_address, regs[31] (x30 the LR), sp, pc.
	sigFrameLinuxARM64 = sigFrame{base: []int64{0, 8, -8}, uc: []int64{128},
		signo: -128, spAlign: 16,
		pc: 176 + 8 + 32*8, sp: 176 + 8 + 31*8, lr: 176 + 8 + 30*8}
	// ppc64: the kernel's SP is 128 bytes (__SIGNAL_FRAMESIZE) below
	// struct rt_sigframe { ucontext; ... }; qemu-user leaves 16 more
	// (its frame is the 32-bit kernel's, rt_sf - (__SIGNAL_FRAMESIZE
	// + 16)). uc_mcontext (struct sigcontext) at 168 (uc_flags,
	// uc_link, uc_stack, uc_sigmask, 15 unused sigsets): 4 unused
	// words, int signal (200), handler, oldmask, regs (224, pointing
	// to gp_regs), gp_regs[48] (232: r1 the SP, nip (32) the PC, link
	// (36) the LR).
	sigFrameLinuxPPC64 = sigFrame{base: []int64{0, 8, -8}, uc: []int64{128, 128 + 16},
		signo: 200, selfAt: 224, selfTo: 232, spAlign: 8,
		pc: 232 + 32*8, sp: 232 + 1*8, lr: 232 + 36*8}
	// s390x: struct rt_sigframe { callee_used_stack (160 bytes);
	// svc_insn (2); siginfo (128, at 168); ucontext (at 296) }, the
	// kernel's SP at callee_used_stack; uc_mcontext (_sigregs) at 40:
	// psw mask, psw addr (the PC, 48), gprs[16] (56: r14 the LR, r15
	// the SP).
	sigFrameLinuxS390X = sigFrame{base: []int64{0, 8, -8}, uc: []int64{296},
		signo: -128, spAlign: 8,
		pc: 48, sp: 56 + 15*8, lr: 56 + 14*8}
)

// The values of stack_t's ss_flags the kernel writes in uc_stack.
const (
	ssOnStack = 1 // the interrupted SP was on the alternate stack
	ssDisable = 2 // the thread has no alternate stack
)

// isSigtramp reports whether name is the runtime's signal handler, the
// function the kernel enters with a signal frame: runtime.sigtramp,
// runtime.cgoSigtramp (cgo binaries), and on ppc64 (big-endian, ELFv1,
// where runtime.sigtramp is a function descriptor) the code it points
// to: runtime._sigtramp up to Go 1.12, the static sigtramp<> after.
func isSigtramp(name string) bool {
	switch name {
	case "runtime.sigtramp", "runtime.cgoSigtramp", "runtime._sigtramp", "sigtramp":
		return true
	}
	return false
}

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
// delta is fp, to the context the signal interrupted: its PC, SP and LR,
// read from the ucontext the kernel gave the handler.
func (u *unwinder) crossSignal(fp uint64) {
	sf := u.arch.sig
	pc0, sp0 := u.frame.PC, u.frame.SP
	uc, ok := u.findUcontext(fp)
	if !ok {
		u.stop(StackFrame{}, &UnwindError{PC: pc0, SP: sp0,
			Msg: fmt.Sprintf("crossing the signal frame of %s: no ucontext that checks out near %#x (frame size unknown, a foreign signal restorer, or damaged memory)", u.frame.Func.Name(), fp+uint64(sf.uc[0]))})
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
// signal handler, whose frame top is fp: for each place the kernel's SP
// may be (sigFrame.base) and the ucontext relative to it (sigFrame.uc),
// the first that checks out (checkUcontext). If none does, there is no
// ucontext: a handler whose frame is not the runtime's, or hostile
// memory. It reads a bounded number of words.
func (u *unwinder) findUcontext(fp uint64) (uint64, bool) {
	sf := u.arch.sig
	for _, b := range sf.base {
		for _, off := range sf.uc {
			if uc := fp + uint64(b+off); u.checkUcontext(uc) {
				return uc, true
			}
		}
	}
	return 0, false
}

// checkUcontext reports whether a ucontext the kernel wrote for the
// current frame, the runtime's signal handler, is at uc: uc_flags is
// small, uc_link nil, uc_stack an alternate stack that holds the handler's
// SP (or none); the architecture's signal number, pointer into the frame
// and restorer (the runtime's, or one outside Go code) are there; and the
// interrupted SP is aligned and not 0.
func (u *unwinder) checkUcontext(uc uint64) bool {
	sf := u.arch.sig
	flags, err1 := u.read(uc)
	link, err2 := u.read(uc + u.ptr)
	ssSP, err3 := u.read(uc + 2*u.ptr)
	ssFlags, err4 := u.read32(uc + 3*u.ptr)
	ssSize, err5 := u.read(uc + 4*u.ptr)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || flags > 0xff || link != 0 {
		return false
	}
	switch ssFlags {
	case 0, ssOnStack:
		if sp := u.frame.SP; sp < ssSP || sp-ssSP >= ssSize {
			return false
		}
	case ssDisable:
	default:
		return false
	}
	if sf.signo != 0 {
		if n, err := u.read32(uc + uint64(sf.signo)); err != nil || n < 1 || n > 64 {
			return false
		}
	}
	if sf.selfAt != 0 {
		if p, err := u.read(uc + uint64(sf.selfAt)); err != nil || p != uc+uint64(sf.selfTo) {
			return false
		}
	}
	if sf.restorer != 0 {
		ret, err := u.read(uc + uint64(sf.restorer))
		if err != nil {
			return false
		}
		if f, err := u.t.ResolveFunction(ret); err == nil && !strings.HasPrefix(f.Name(), "runtime.sigreturn") {
			return false
		}
	}
	sp, err := u.read(uc + uint64(sf.sp))
	return err == nil && sp != 0 && sp%sf.spAlign == 0
}

// read32 reads the 32-bit integer at addr.
func (u *unwinder) read32(addr uint64) (uint32, error) {
	b := u.buf[:4]
	n, err := u.mem.ReadAt(b, int64(addr))
	if n == len(b) {
		return u.t.hdr.rd.u32(b), nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return 0, err
}
