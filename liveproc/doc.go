// Package liveproc stops a running Linux process with ptrace and reads it
// as package elfcore reads a core file: the registers of each of its
// threads (elfcore.Thread, in the kernel's elf_gregset_t order), its
// memory (an io.ReaderAt over /proc/PID/mem), its mappings
// (/proc/PID/maps, as elfcore.Mapping) and its executable's image
// (elfcore.Image, from /proc/PID/auxv and memory). Detach lets the process
// go on, and says how long it was stopped.
//
//	p, err := liveproc.Attach(pid)
//	...
//	for _, th := range p.Threads {
//		for fr, err := range tab.Unwind(gosym.Regs{PC: th.PC, SP: th.SP, LR: th.LR}, p) {
//			...
//		}
//	}
//	stopped, err := p.Detach()
//
// Attach stops every thread: it seizes each task of /proc/PID/task
// (PTRACE_SEIZE, then PTRACE_INTERRUPT: no signal is sent), waits for it
// to stop, and lists the tasks again until no new one appears, so that
// threads created meanwhile are stopped too (a stopped thread creates
// none). A signal that arrives while the process is stopped is delivered
// when it goes on.
//
// Limits: Linux only, and a process of the caller's own architecture
// (registers come from PTRACE_GETREGSET with NT_PRSTATUS). The package is
// tested live on linux/amd64 only: qemu-user, which runs the other
// architectures here, does not support ptrace of its guest. Ptrace must
// be permitted: the caller is root (CAP_SYS_PTRACE), or the process's
// parent or of the same user where /proc/sys/kernel/yama/ptrace_scope
// allows it. The executable's load bias (for a position-independent
// executable) is the elfcore.Image's Relocation, as for a core.
//
// Ptrace ties a traced thread to the OS thread that attached it: a Process
// keeps one OS thread locked for itself from Attach to Detach. The caller
// must not wait for the process (os/exec's Cmd.Wait, syscall.Wait4) while
// it is attached: a wait would take the stops Attach waits for.
package liveproc
