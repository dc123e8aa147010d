package elfcore

import (
	"debug/elf"
	"fmt"
	"strings"
)

// regNames names the words of the kernel's elf_gregset_t (the pr_reg of
// an NT_PRSTATUS note) for each GOARCH, in order: its struct user_regs_struct
// (or struct pt_regs) of arch/*/include/uapi/asm.
var regNames = map[string][]string{
	"amd64": strings.Fields("r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ss fs_base gs_base ds es fs gs"),
	"386":   strings.Fields("ebx ecx edx esi edi ebp eax ds es fs gs orig_eax eip cs eflags esp ss"),
	"arm64": append(numbered("x", 31), "sp", "pc", "pstate"),
	"arm":   append(numbered("r", 16), "cpsr", "orig_r0"),
	"ppc64": append(numbered("r", 32), strings.Fields("nip msr orig_r3 ctr link xer ccr softe trap dar dsisr result")...),
	"s390x": append(append([]string{"psw_mask", "psw_addr"}, numbered("r", 16)...), "acr0_1", "acr2_3", "acr4_5", "acr6_7", "acr8_9", "acr10_11", "acr12_13", "acr14_15", "orig_r2"),
	"riscv64": strings.Fields("pc ra sp gp tp t0 t1 t2 s0 s1 a0 a1 a2 a3 a4 a5 a6 a7 " +
		"s2 s3 s4 s5 s6 s7 s8 s9 s10 s11 t3 t4 t5 t6"),
	"loong64": append(numbered("r", 32), "orig_a0", "csr_era", "csr_badv"),
}

// numbered returns prefix0 ... prefix(n-1).
func numbered(prefix string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprint(prefix, i)
	}
	return s
}

// RegNames returns the names of the words of Thread.Regs for the core's
// architecture, in the kernel's order: "rip", "rsp", "r14" (the goroutine
// register of Go's amd64 ABI) on amd64; "pc", "sp", "x28" on arm64;
// nil for an architecture the package does not know.
func (f *File) RegNames() []string {
	g := f.GOARCH()
	if g == "ppc64le" {
		g = "ppc64"
	}
	return regNames[g]
}

// Reg returns the register of th named as RegNames names it; ok is false
// for a name the core's architecture does not have, or that th's note
// does not hold.
func (f *File) Reg(th Thread, name string) (v uint64, ok bool) {
	for i, n := range f.RegNames() {
		if n == name {
			if i < len(th.Regs) {
				return th.Regs[i], true
			}
			return 0, false
		}
	}
	return 0, false
}

// machineOf returns the ELF machine and class of goarch's Linux processes.
func machineOf(goarch string) (elf.Machine, elf.Class, bool) {
	switch goarch {
	case "amd64":
		return elf.EM_X86_64, elf.ELFCLASS64, true
	case "386":
		return elf.EM_386, elf.ELFCLASS32, true
	case "arm64":
		return elf.EM_AARCH64, elf.ELFCLASS64, true
	case "arm":
		return elf.EM_ARM, elf.ELFCLASS32, true
	case "ppc64", "ppc64le":
		return elf.EM_PPC64, elf.ELFCLASS64, true
	case "s390x":
		return elf.EM_S390, elf.ELFCLASS64, true
	case "riscv64":
		return elf.EM_RISCV, elf.ELFCLASS64, true
	case "loong64":
		return elf.EM_LOONGARCH, elf.ELFCLASS64, true
	}
	return 0, 0, false
}

// NewThread returns the thread tid of a linux/goarch process whose
// general registers, in the kernel's elf_gregset_t order, are regs (as an
// NT_PRSTATUS note, or PTRACE_GETREGSET with NT_PRSTATUS, gives them):
// its PC, SP and LR are taken from regs where a core's would be. Thread
// keeps regs.
func NewThread(goarch string, tid int, regs []uint64) (Thread, error) {
	m, class, ok := machineOf(goarch)
	if !ok {
		return Thread{}, fmt.Errorf("elfcore: registers of %s: architecture not known", goarch)
	}
	lay, _ := layoutOf(m, class)
	if len(regs) <= max(lay.pc, lay.sp, lay.lr) {
		return Thread{}, fmt.Errorf("elfcore: %d registers of %s: too few", len(regs), goarch)
	}
	th := Thread{PID: tid, Regs: regs, PC: regs[lay.pc], SP: regs[lay.sp]}
	if lay.lr >= 0 {
		th.LR = regs[lay.lr]
	}
	return th, nil
}
