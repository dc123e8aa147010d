package gosym

import (
	"encoding/binary"
	"runtime"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// kernelFrame writes, into memory, the signal frame the linux kernel
// builds for a handler entered with SP k, as the kernel's own structs lay
// it out (struct rt_sigframe, struct ucontext, struct sigcontext of
// arch/*/kernel/signal*.c and arch/*/include/uapi/asm/*.h), written here
// from those structs rather than from sigFrame's table: the interrupted
// pc, sp and lr, the alternate signal stack [ss, ss+ssSize) with flags
// ssFlags, and the signal number sig. It returns the ucontext's address
// and where the fields the unwinder checks are (for the tests that damage
// them).
type kernelFrame struct {
	goarch string
	// qemu: ppc64's frame as qemu-user lays it out (16 bytes further).
	qemu bool
}

// frameFields are the addresses of a written frame's checked fields.
type frameFields struct {
	uc, link, ssSP, signo, self, restorer, sp uint64
}

// sigMem is memory at base, in the byte order and pointer size of a
// target, that frames are written into.
type sigMem struct {
	snapshot
	bo  binary.ByteOrder
	ptr uint64
}

func (m *sigMem) put(addr, v uint64) {
	b := m.data[addr-m.base:]
	if m.ptr == 4 {
		m.bo.PutUint32(b, uint32(v))
	} else {
		m.bo.PutUint64(b, v)
	}
}

func (m *sigMem) put32(addr uint64, v uint32) { m.bo.PutUint32(m.data[addr-m.base:], v) }

// stackT writes a stack_t { void *ss_sp; int ss_flags; size_t ss_size; }
// at a.
func (m *sigMem) stackT(a, ss, flags, size uint64) {
	m.put(a, ss)
	m.put32(a+m.ptr, uint32(flags))
	m.put(a+2*m.ptr, size)
}

func (kf kernelFrame) write(m *sigMem, k, pc, sp, lr, restorer, ss, ssFlags, ssSize uint64, sig uint32) frameFields {
	var f frameFields
	switch kf.goarch {
	case "386":
		// struct rt_sigframe { char *pretcode; int sig; struct
		// siginfo *pinfo; void *puc; struct siginfo info (128);
		// struct ucontext uc; ... }
		uc := k + 4 + 4 + 4 + 4 + 128
		m.put(k, restorer)
		m.put32(k+4, sig)
		m.put(k+8, k+16)
		m.put(k+12, uc)
		m.put32(k+16, sig) // info.si_signo
		// struct ucontext { ulong uc_flags; struct ucontext
		// *uc_link; stack_t uc_stack; struct sigcontext
		// uc_mcontext; ... }; struct sigcontext { gs, fs, es, ds
		// (u16 + pad each); di, si, bp, sp, bx, dx, cx, ax,
		// trapno, err, ip; ... }
		m.stackT(uc+8, ss, ssFlags, ssSize)
		mc := uc + 20
		m.put(mc+16+3*4, sp)
		m.put(mc+16+10*4, pc)
		f = frameFields{uc: uc, link: uc + 4, ssSP: uc + 8, signo: k + 16, self: k + 12, restorer: k, sp: mc + 28}
	case "amd64":
		// struct rt_sigframe { char *pretcode; struct ucontext uc;
		// struct siginfo info; }; struct ucontext { uc_flags,
		// uc_link, uc_stack, struct sigcontext uc_mcontext (at 40:
		// r8-r15, di, si, bp, bx, dx, ax, cx, sp, ip, flags, cs gs fs
		// ss, err, trapno, oldmask, cr2, fpstate, reserved[8]: 32
		// words), sigset_t uc_sigmask (8 bytes) }.
		uc := k + 8
		m.put(k, restorer)
		m.stackT(uc+16, ss, ssFlags, ssSize)
		mc := uc + 40
		m.put(mc+15*8, sp)
		m.put(mc+16*8, pc)
		info := mc + 32*8 + 8
		m.put32(info, sig)
		f = frameFields{uc: uc, link: uc + 8, ssSP: uc + 16, signo: info, restorer: k, sp: mc + 15*8}
	case "arm":
		// struct rt_sigframe { struct siginfo info (128); struct
		// sigframe { struct ucontext uc; ... } sig; }; struct
		// sigcontext { trap_no, error_code, oldmask, r0-r10, fp,
		// ip, sp, lr, pc, cpsr, fault_address } at 20.
		uc := k + 128
		m.put32(k, sig)
		m.stackT(uc+8, ss, ssFlags, ssSize)
		mc := uc + 20
		m.put(mc+(3+13)*4, sp)
		m.put(mc+(3+14)*4, lr)
		m.put(mc+(3+15)*4, pc)
		f = frameFields{uc: uc, link: uc + 4, ssSP: uc + 8, signo: k, sp: mc + 16*4}
	case "ppc64", "ppc64le":
		// The handler's SP is __SIGNAL_FRAMESIZE (128) below struct
		// rt_sigframe { struct ucontext uc; ... } (qemu-user: 144);
		// struct ucontext { uc_flags, uc_link, uc_stack,
		// uc_sigmask, __unused[15], struct sigcontext uc_mcontext
		// (168) }; struct sigcontext { _unused[4], int signal,
		// _pad0, handler, oldmask, struct pt_regs *regs,
		// gp_regs[48] (r1, nip 32, link 36) }.
		uc := k + 128
		if kf.qemu {
			uc += 16
		}
		m.put(k, sp) // the back chain
		m.stackT(uc+16, ss, ssFlags, ssSize)
		sc := uc + 168
		m.put32(sc+32, sig)
		m.put(sc+56, sc+64)
		m.put(sc+64+1*8, sp)
		m.put(sc+64+32*8, pc)
		m.put(sc+64+36*8, lr)
		f = frameFields{uc: uc, link: uc + 8, ssSP: uc + 16, signo: sc + 32, self: sc + 56, sp: sc + 64 + 8}
	case "s390x":
		// struct rt_sigframe { __u8 callee_used_stack[160]; __u16
		// svc_insn; struct siginfo info (at 168); struct
		// ucontext_extended uc (at 296); }; _sigregs { psw { mask,
		// addr }, gprs[16] } at 40.
		uc := k + 296
		m.put32(k+168, sig)
		m.stackT(uc+16, ss, ssFlags, ssSize)
		m.put(uc+48, pc)
		m.put(uc+56+14*8, lr)
		m.put(uc+56+15*8, sp)
		f = frameFields{uc: uc, link: uc + 8, ssSP: uc + 16, signo: k + 168, sp: uc + 56 + 15*8}
	}
	return f
}

// TestSignalFrames crosses made-up signal frames of every architecture
// whose frame Unwind crosses, written as the kernel lays them out, in
// binaries of each (the corpus's, and the test binary on linux/amd64):
// from runtime.sigtramp's entry, the next frame is the interrupted
// function at the interrupted PC and SP, reached by signal, and the one
// after it its caller, through the interrupted LR on link-register
// machines (the interrupted function is at its entry: SP delta 0) or the
// return address at the interrupted SP. Where one checked field of the
// frame is damaged (uc_link, the alternate stack, the signal number, the
// frame's pointer to itself, the restorer, a zero SP), the walk ends at
// runtime.sigtramp with an error that says no ucontext checks out.
func TestSignalFrames(t *testing.T) {
	type binCase struct {
		name string // a corpus entry, or "self"
		kf   kernelFrame
		// base is how far below the kernel's SP sigtramp's SP is,
		// in a frame whose pushes the pcsp table does not count
		// (arm's MOVM.DB.W [R4-R11] from Go 1.16).
		base uint64
	}
	cases := []binCase{
		{"go1.12.17.linux-386.nodwarf", kernelFrame{goarch: "386"}, 0},
		{"go1.21.13.linux-arm.nodwarf", kernelFrame{goarch: "arm"}, 0},
		{"go1.21.13.linux-arm.nodwarf", kernelFrame{goarch: "arm"}, 32},
		{"go1.10.8.linux-ppc64.nodwarf", kernelFrame{goarch: "ppc64"}, 0},
		{"go1.10.8.linux-ppc64.nodwarf", kernelFrame{goarch: "ppc64", qemu: true}, 0},
		{"go1.17.13.linux-s390x", kernelFrame{goarch: "s390x"}, 0},
		{"self", kernelFrame{goarch: "amd64"}, 0},
	}
	entries, err := testcorpus.Entries()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]testcorpus.Entry{}
	for _, e := range entries {
		byName[e.Name] = e
	}
	for _, c := range cases {
		name := c.kf.goarch
		if c.kf.qemu {
			name += "/qemu"
		}
		if c.base != 0 {
			name += "/untracked-push"
		}
		t.Run(name, func(t *testing.T) {
			var tab *Table
			if c.name == "self" {
				if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
					t.Skip("the test binary is not a linux/amd64 one")
				}
				tab = selfTable(t)
			} else {
				e, ok := byName[c.name]
				if !ok {
					t.Fatalf("no corpus entry %s", c.name)
				}
				bin, err := e.Binary()
				if err != nil {
					t.Fatal(err)
				}
				tab = mustTable(t, bin)
			}
			defer tab.Close()
			checkSignalFrames(t, tab, c.kf, c.base)
		})
	}
}

// sigRestorer returns the entry of the runtime's signal restorer
// (runtime.sigreturn__sigaction, runtime.sigreturn before Go 1.21), 0 if
// none.
func sigRestorer(tab *Table) uint64 {
	for _, name := range []string{"runtime.sigreturn__sigaction", "runtime.sigreturn"} {
		if f, err := tab.LookupFunction(name); err == nil {
			return f.Entry()
		}
	}
	return 0
}

func checkSignalFrames(t *testing.T, tab *Table, kf kernelFrame, base uint64) {
	t.Helper()
	if got := tab.goarch(); got != kf.goarch {
		t.Fatalf("binary's architecture %s", got)
	}
	lookup := func(name string) Function {
		t.Helper()
		f, err := tab.LookupFunction(name)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	tramp := lookup("runtime.sigtramp")
	fn := lookup("runtime.main")  // interrupted at its entry
	caller := lookup("main.main") // its "caller", by the LR or the return address
	restorer := sigRestorer(tab)
	ptr := uint64(tab.hdr.rd.ptrSize)
	var bo binary.ByteOrder = binary.LittleEndian
	if tab.hdr.rd.bigEndian {
		bo = binary.BigEndian
	}
	const memBase = 0x10000
	m := &sigMem{snapshot: snapshot{base: memBase, data: make([]byte, 0x6000)}, bo: bo, ptr: ptr}
	k := uint64(memBase + 0x2000)          // the handler's SP the kernel set
	ss, ssSize := k-0x1000, uint64(0x2000) // the alternate stack holding it
	sp := uint64(memBase + 0x5000)         // the interrupted SP
	ret := caller.Entry() + 2*ptr          // the caller's return address
	var lr uint64
	if kf.goarch == "386" || kf.goarch == "amd64" {
		m.put(sp, ret)
	} else {
		lr = ret
	}
	for _, tc := range []struct {
		name string
		// cRestorer: the restorer is the C library's (a cgo
		// binary's), outside every Go function.
		cRestorer bool
		// damage damages the written frame, reporting false where
		// the frame has no such field.
		damage func(f frameFields) bool
		// ssFlags is uc_stack's ss_flags; disabled: no alternate
		// stack (ss_sp and ss_size 0).
		ssFlags  uint64
		disabled bool
	}{
		{name: "sound"},
		{name: "on the alternate stack already", ssFlags: ssOnStack},
		{name: "no alternate stack", ssFlags: ssDisable, disabled: true},
		{name: "the C library's restorer", cRestorer: true},
		{name: "uc_link", damage: func(f frameFields) bool { m.put(f.link, 0x1000); return true }},
		{name: "uc_flags", damage: func(f frameFields) bool { m.put(f.uc, 0x1000); return true }},
		{name: "alternate stack elsewhere", damage: func(f frameFields) bool { m.put(f.ssSP, k+0x4000); return true }},
		{name: "alternate stack flags", damage: func(f frameFields) bool { m.put32(f.ssSP+ptr, 7); return true }},
		{name: "signal number", damage: func(f frameFields) bool {
			if f.signo == 0 {
				return false
			}
			m.put32(f.signo, 0)
			return true
		}},
		{name: "pointer into the frame", damage: func(f frameFields) bool {
			if f.self == 0 {
				return false
			}
			m.put(f.self, f.uc+0x40)
			return true
		}},
		{name: "restorer", damage: func(f frameFields) bool {
			if f.restorer == 0 {
				return false
			}
			m.put(f.restorer, fn.Entry())
			return true
		}},
		{name: "zero SP", damage: func(f frameFields) bool { m.put(f.sp, 0); return true }},
	} {
		clear(m.data[:0x4000])
		s, size := ss, ssSize
		if tc.disabled {
			s, size = 0, 0
		}
		r := restorer
		if tc.cRestorer {
			r = 0x7f00_0000_1000 & (1<<(8*ptr-1) - 1) // outside the binary
		}
		f := kf.write(m, k, fn.Entry(), sp, lr, r, s, tc.ssFlags, size, 3)
		if tc.damage != nil && !tc.damage(f) {
			continue
		}
		var frames []StackFrame
		var last error
		for fr, err := range tab.Unwind(Regs{PC: tramp.Entry(), SP: k - base, LR: tramp.Entry() + 0x40}, m) {
			if err != nil {
				last = err
				break
			}
			frames = append(frames, fr)
			if len(frames) == 3 {
				break
			}
		}
		if tc.damage != nil {
			if len(frames) != 1 || last == nil || !strings.Contains(last.Error(), "crossing the signal frame of runtime.sigtramp: no ucontext that checks out") {
				t.Errorf("%s damaged: %d frames, error %v; want the walk to end at runtime.sigtramp, no ucontext found", tc.name, len(frames), last)
			}
			continue
		}
		if len(frames) != 3 {
			t.Errorf("%s: %d frames, error %v; want 3", tc.name, len(frames), last)
			continue
		}
		if g := frames[1]; g.Func.Name() != "runtime.main" || g.PC != fn.Entry() || g.SP != sp || g.Reached != ReachedSignal {
			t.Errorf("%s: interrupted frame %s pc %#x sp %#x reached %v; want runtime.main pc %#x sp %#x reached signal", tc.name, g.Func.Name(), g.PC, g.SP, g.Reached, fn.Entry(), sp)
		}
		if g := frames[2]; g.Func.Name() != "main.main" || g.PC != ret || g.Reached != ReachedCall {
			t.Errorf("%s: its caller %s pc %#x reached %v; want main.main pc %#x", tc.name, g.Func.Name(), g.PC, g.Reached, ret)
		}
	}
}

// signalCases are the architectures FuzzSignalFrames crosses frames of:
// corpus binaries of each, and a kernel frame written for each as seed.
var signalCases = []struct {
	entry string
	kf    kernelFrame
}{
	{"go1.12.17.linux-386.nodwarf", kernelFrame{goarch: "386"}},
	{"go1.21.13.linux-arm.nodwarf", kernelFrame{goarch: "arm"}},
	{"go1.10.8.linux-ppc64.nodwarf", kernelFrame{goarch: "ppc64"}},
	{"go1.10.8.linux-ppc64.nodwarf", kernelFrame{goarch: "ppc64", qemu: true}},
	{"go1.17.13.linux-s390x", kernelFrame{goarch: "s390x"}},
	{"go1.26.8.linux-amd64", kernelFrame{goarch: "amd64"}},
}

// FuzzSignalFrames crosses signal frames of hostile memory: the input is
// the memory above the SP of runtime.sigtramp, entered by the kernel, in a
// binary of one of signalCases' architectures (the first byte picks it).
// The seeds are sound kernel frames, whose interrupted context is
// runtime.main's entry. Every walk ends, without a panic, within
// maxFrames frames; a frame reached by signal has a PC in a function.
func FuzzSignalFrames(f *testing.F) {
	entries, err := testcorpus.Entries()
	if err != nil {
		f.Fatal(err)
	}
	byName := map[string]testcorpus.Entry{}
	for _, e := range entries {
		byName[e.Name] = e
	}
	const base, size = 0x10000, 0x800
	tabs := make([]*Table, len(signalCases))
	for i, c := range signalCases {
		e, ok := byName[c.entry]
		if !ok {
			f.Fatalf("no corpus entry %s", c.entry)
		}
		bin, err := e.Binary()
		if err != nil {
			f.Fatal(err)
		}
		obj, err := object.NewBytes(bin)
		if err != nil {
			f.Fatal(err)
		}
		if tabs[i], err = NewTable(obj); err != nil {
			f.Fatal(err)
		}
		tab := tabs[i]
		var bo binary.ByteOrder = binary.LittleEndian
		if tab.hdr.rd.bigEndian {
			bo = binary.BigEndian
		}
		m := &sigMem{snapshot: snapshot{base: base, data: make([]byte, size)}, bo: bo, ptr: uint64(tab.hdr.rd.ptrSize)}
		fn, err := tab.LookupFunction("runtime.main")
		if err != nil {
			f.Fatal(err)
		}
		c.kf.write(m, base, fn.Entry(), base+size-0x100, fn.Entry()+8, sigRestorer(tab), base-0x100, 0, 0x1000, 3)
		tramp, err := tab.LookupFunction("runtime.sigtramp")
		if err != nil {
			f.Fatal(err)
		}
		crossed := false
		for fr, err := range tab.Unwind(Regs{PC: tramp.Entry(), SP: base}, m) {
			crossed = crossed || err == nil && fr.Reached == ReachedSignal && fr.Func.Name() == "runtime.main"
		}
		if !crossed {
			f.Fatalf("%s: the seed's signal frame is not crossed", c.entry)
		}
		fuzzseed.Add(f, append([]byte{byte(i)}, m.data...))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		tab := tabs[int(in[0])%len(tabs)]
		tramp, err := tab.LookupFunction("runtime.sigtramp")
		if err != nil {
			t.Fatal(err)
		}
		mem := &snapshot{base: base, data: in[1:]}
		n := 0
		for fr, err := range tab.Unwind(Regs{PC: tramp.Entry(), SP: base}, mem) {
			n++
			if err != nil {
				break
			}
			if fr.Reached == ReachedSignal && fr.Func.Entry() > fr.PC {
				t.Fatalf("frame reached by signal at pc %#x in %s, entry %#x", fr.PC, fr.Func.Name(), fr.Func.Entry())
			}
		}
		if n > maxFrames+1 {
			t.Fatalf("%d frames", n)
		}
	})
}
