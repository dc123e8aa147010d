// Package hostrun runs Linux programs that the tests build for this
// machine's own architecture, or for 386 or arm64 on an amd64 machine:
// natively where the kernel can run them, else under qemu-user.
//
// An amd64 Linux kernel runs 386 programs only when it was built with
// IA-32 emulation, which some virtual machines leave out: there, execve
// fails with ENOEXEC ("exec format error"). Native probes that once, with
// a 93-byte 386 program that only exits, and Command falls back to
// qemu-i386 (Debian's qemu-user, which .ci/run installs).
//
// qemu-i386 (7.2) runs Go's 386 programs only while no signal arrives on
// a thread the runtime made: the runtime's signal handler then fails
// ("fatal: morestack on gsignal", or a SIGSEGV). Emulated programs run
// with asynchronous preemption, which sends such signals, turned off (see
// Env); a program that must take a signal (a CPU profile's SIGPROF, the
// SIGQUIT of a crash core) cannot run emulated: callers check Native.
package hostrun

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// ErrUnavailable reports a program this machine cannot run: another
// architecture, or 386 without IA-32 emulation and without qemu-user.
var ErrUnavailable = errors.New("hostrun: cannot run the program here")

// qemu names the qemu-user program for each GOARCH Command may need it for.
var qemu = map[string]string{"386": "qemu-i386", "amd64": "qemu-x86_64", "arm64": "qemu-aarch64"}

// Native reports whether this machine runs linux/goarch programs itself.
func Native(goarch string) bool {
	if runtime.GOOS != "linux" {
		return false
	}
	if goarch == runtime.GOARCH {
		return true
	}
	if goarch == "386" && runtime.GOARCH == "amd64" {
		ia32Once.Do(probeIA32)
		return ia32
	}
	return false
}

// Prefix returns what runs a linux/goarch program here: nothing when the
// kernel runs it, else the path of the qemu-user program to run it under.
func Prefix(goarch string) ([]string, error) {
	if Native(goarch) {
		return nil, nil
	}
	q, ok := qemu[goarch]
	if !ok || runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return nil, fmt.Errorf("%w: linux/%s on %s/%s", ErrUnavailable, goarch, runtime.GOOS, runtime.GOARCH)
	}
	path, err := exec.LookPath(q)
	if err != nil {
		return nil, fmt.Errorf("%w: the kernel does not run linux/%s programs and %s is not installed (apt-get install qemu-user; .ci/run does)", ErrUnavailable, goarch, q)
	}
	return []string{path}, nil
}

// Env returns the environment variables that a linux/goarch program needs
// to run here, beyond its own: none natively, and GODEBUG's
// asyncpreemptoff=1 under qemu-user (see the package documentation).
// Command sets them; a caller that sets the command's Env must add them.
func Env(goarch string) []string {
	if Native(goarch) {
		return nil
	}
	return []string{"GODEBUG=asyncpreemptoff=1"}
}

// Command returns the command that runs the linux/goarch program path
// with args here (see Prefix), with the environment of this process and
// Env's variables.
func Command(ctx context.Context, goarch, path string, args ...string) (*exec.Cmd, error) {
	pre, err := Prefix(goarch)
	if err != nil {
		return nil, err
	}
	if len(pre) == 0 {
		return exec.CommandContext(ctx, path, args...), nil
	}
	cmd := exec.CommandContext(ctx, pre[0], append(append(pre[1:], path), args...)...)
	cmd.Env = append(os.Environ(), Env(goarch)...)
	return cmd, nil
}

var (
	ia32Once sync.Once
	ia32     bool
)

// probeIA32 runs a 386 program that exits at once: the kernel runs 386
// programs only if it exits 0. The kernel refuses one it cannot run with
// ENOEXEC; the exec can also fail with ETXTBSY while another goroutine's
// fork holds the just-written file open (go.dev/issue/22315), which is
// tried again, a bounded number of times. Any other failure counts as
// "not native": Command then uses qemu-user, or reports ErrUnavailable.
func probeIA32() {
	dir, err := os.MkdirTemp("", "hostrun")
	if err != nil {
		return
	}
	defer os.RemoveAll(dir)
	exe := filepath.Join(dir, "exit386")
	if err := os.WriteFile(exe, exit386(), 0o755); err != nil {
		return
	}
	for range 20 {
		err = exec.Command(exe).Run()
		if !errors.Is(err, syscall.ETXTBSY) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	ia32 = err == nil
}

// exit386 returns a static ELF32 i386 executable whose one instruction
// sequence calls exit(0): an ELF header, one PT_LOAD program header
// mapping the file at 0x8048000, then mov eax,1; xor ebx,ebx; int 0x80.
func exit386() []byte {
	const (
		base   = 0x8048000
		ehsize = 52
		phsize = 32
	)
	code := []byte{0xb8, 1, 0, 0, 0, 0x31, 0xdb, 0xcd, 0x80}
	le := binary.LittleEndian
	b := make([]byte, 0, ehsize+phsize+len(code))
	b = append(b, 0x7f, 'E', 'L', 'F', 1, 1, 1) // ELFCLASS32, ELFDATA2LSB, EV_CURRENT
	b = append(b, make([]byte, 16-len(b))...)
	b = le.AppendUint16(b, 2)                  // e_type: ET_EXEC
	b = le.AppendUint16(b, 3)                  // e_machine: EM_386
	b = le.AppendUint32(b, 1)                  // e_version
	b = le.AppendUint32(b, base+ehsize+phsize) // e_entry
	b = le.AppendUint32(b, ehsize)             // e_phoff
	b = le.AppendUint32(b, 0)                  // e_shoff
	b = le.AppendUint32(b, 0)                  // e_flags
	b = le.AppendUint16(b, ehsize)             // e_ehsize
	b = le.AppendUint16(b, phsize)             // e_phentsize
	b = le.AppendUint16(b, 1)                  // e_phnum
	b = le.AppendUint16(b, 0)                  // e_shentsize
	b = le.AppendUint16(b, 0)                  // e_shnum
	b = le.AppendUint16(b, 0)                  // e_shstrndx
	size := uint32(ehsize + phsize + len(code))
	b = le.AppendUint32(b, 1)    // p_type: PT_LOAD
	b = le.AppendUint32(b, 0)    // p_offset
	b = le.AppendUint32(b, base) // p_vaddr
	b = le.AppendUint32(b, base) // p_paddr
	b = le.AppendUint32(b, size) // p_filesz
	b = le.AppendUint32(b, size) // p_memsz
	b = le.AppendUint32(b, 5)    // p_flags: PF_R|PF_X
	b = le.AppendUint32(b, 0x1000)
	return append(b, code...)
}
