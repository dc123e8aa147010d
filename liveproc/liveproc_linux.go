//go:build linux

package liveproc

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/gosym-dev/gosym/elfcore"
)

// Requests and constants of ptrace(2) that package syscall does not name.
const (
	ptraceGetRegset = 0x4204
	ptraceSeize     = 0x4206
	ptraceInterrupt = 0x4207
	ptraceEventStop = 128 // PTRACE_EVENT_STOP: the stop of PTRACE_INTERRUPT, or a group-stop
	ntPrstatus      = 1   // NT_PRSTATUS: the general registers' regset
)

// maxRounds bounds the times Attach lists the process's tasks: each round
// stops the threads that the previous ones did not, and stopped threads
// create none, so only threads created faster than they are stopped make
// more rounds.
const maxRounds = 100

// Process is a process stopped by Attach. Its methods may be called from
// several goroutines at once, but for Detach, which must be the last.
type Process struct {
	PID int
	// Threads are the stopped threads, in the order /proc/PID/task
	// lists them (the main thread first), with their registers. Signal
	// is the signal that stopped a thread on its way to it, 0 for the
	// stop Attach asked for; it is delivered at Detach.
	Threads []elfcore.Thread

	tr      *tracer
	mem     *os.File
	tids    []int                  // the threads attached, in order
	pending map[int]syscall.Signal // signals to deliver at Detach, by thread
	start   time.Time              // when the first thread was asked to stop
	stopped time.Duration          // how long the process was stopped, once detached
}

// A tracer runs functions on one locked OS thread: ptrace answers only the
// thread that attached. Its goroutine never unlocks, so the OS thread ends
// with it, and the kernel detaches whatever it still traced.
type tracer struct{ req chan func() }

func newTracer() *tracer {
	t := &tracer{req: make(chan func())}
	go func() {
		runtime.LockOSThread()
		for f := range t.req {
			f()
		}
	}()
	return t
}

// do runs f on the tracer's thread and returns when it has.
func (t *tracer) do(f func()) {
	done := make(chan struct{})
	t.req <- func() { f(); close(done) }
	<-done
}

func ptrace(req, tid int, addr, data uintptr) error {
	_, _, e := syscall.Syscall6(syscall.SYS_PTRACE, uintptr(req), uintptr(tid), addr, data, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// Attach stops every thread of the process pid and reads their registers.
// The process stays stopped until Detach. An error that wraps
// os.ErrPermission says that ptrace is not permitted here.
func Attach(pid int) (*Process, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("liveproc: process %d: not a process ID", pid)
	}
	p := &Process{PID: pid, tr: newTracer(), pending: map[int]syscall.Signal{}}
	var err error
	p.tr.do(func() {
		if err = p.stopAll(); err != nil {
			return
		}
		for _, tid := range p.tids {
			var th elfcore.Thread
			if th, err = readThread(tid); err != nil {
				return
			}
			th.Signal = int(p.pending[tid])
			p.Threads = append(p.Threads, th)
		}
	})
	if err == nil {
		p.mem, err = os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	}
	if err != nil {
		p.Detach()
		return nil, err
	}
	return p, nil
}

// stopAll seizes and interrupts every task of the process, round after
// round, until a listing finds no task that is not stopped.
func (p *Process) stopAll() error {
	attached := map[int]bool{}
	for round := 0; ; round++ {
		tasks, err := listTasks(p.PID)
		if err != nil {
			return err
		}
		var fresh []int
		for _, tid := range tasks {
			if !attached[tid] {
				fresh = append(fresh, tid)
			}
		}
		if len(fresh) == 0 {
			if len(p.tids) == 0 {
				return fmt.Errorf("liveproc: process %d has no thread left", p.PID)
			}
			return nil
		}
		if round == maxRounds {
			return fmt.Errorf("liveproc: process %d: new threads still appear after %d rounds of stopping them", p.PID, round)
		}
		if p.start.IsZero() {
			p.start = time.Now()
		}
		var seized []int
		for _, tid := range fresh {
			attached[tid] = true
			if err := ptrace(ptraceSeize, tid, 0, 0); err != nil {
				if err == syscall.ESRCH {
					continue // exited since the listing
				}
				return fmt.Errorf("liveproc: PTRACE_SEIZE of thread %d of process %d: %w", tid, p.PID, err)
			}
			p.tids = append(p.tids, tid)
			if err := ptrace(ptraceInterrupt, tid, 0, 0); err != nil && err != syscall.ESRCH {
				return fmt.Errorf("liveproc: PTRACE_INTERRUPT of thread %d of process %d: %w", tid, p.PID, err)
			}
			seized = append(seized, tid)
		}
		for _, tid := range seized {
			if err := p.waitStop(tid); err != nil {
				return err
			}
		}
	}
}

// waitStop waits until the seized thread tid stops, or exits (then it is
// forgotten).
func (p *Process) waitStop(tid int) error {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(tid, &ws, syscall.WALL, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("liveproc: waiting for thread %d of process %d to stop: %w", tid, p.PID, err)
		}
		switch {
		case ws.Exited() || ws.Signaled():
			p.tids = slices.DeleteFunc(p.tids, func(t int) bool { return t == tid })
			return nil
		case ws.Stopped():
			if uint32(ws)>>16 != ptraceEventStop {
				// A signal on its way to the thread stopped it
				// first: deliver it when the thread goes on.
				p.pending[tid] = ws.StopSignal()
			}
			return nil
		}
	}
}

// listTasks returns the thread IDs of /proc/pid/task, in its order.
func listTasks(pid int) ([]int, error) {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil, fmt.Errorf("liveproc: process %d: %w", pid, err)
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// readThread reads the general registers of the stopped thread tid.
func readThread(tid int) (elfcore.Thread, error) {
	var buf [64]uintptr
	iov := syscall.Iovec{Base: (*byte)(unsafe.Pointer(&buf[0]))}
	iov.SetLen(int(unsafe.Sizeof(buf)))
	if err := ptrace(ptraceGetRegset, tid, ntPrstatus, uintptr(unsafe.Pointer(&iov))); err != nil {
		return elfcore.Thread{}, fmt.Errorf("liveproc: PTRACE_GETREGSET of thread %d: %w", tid, err)
	}
	word := uint64(unsafe.Sizeof(buf[0]))
	if uint64(iov.Len)%word != 0 || uint64(iov.Len) > uint64(unsafe.Sizeof(buf)) {
		return elfcore.Thread{}, fmt.Errorf("liveproc: thread %d: registers of %d bytes: not a linux/%s process", tid, iov.Len, runtime.GOARCH)
	}
	regs := make([]uint64, uint64(iov.Len)/word)
	for i := range regs {
		regs[i] = uint64(buf[i])
	}
	th, err := elfcore.NewThread(runtime.GOARCH, tid, regs)
	if err != nil {
		return elfcore.Thread{}, fmt.Errorf("liveproc: thread %d: %w (not a linux/%s process?)", tid, err, runtime.GOARCH)
	}
	return th, nil
}

// Detach lets the process go on: every thread is detached, with the
// signal that stopped it, if any. It returns how long the process was
// stopped: from Attach's first stop request to the last thread's detach.
// After Detach, the Process reads nothing.
func (p *Process) Detach() (time.Duration, error) {
	if p.tr == nil {
		return p.stopped, errors.New("liveproc: detached already")
	}
	var errs []error
	p.tr.do(func() {
		for _, tid := range p.tids {
			err := ptrace(syscall.PTRACE_DETACH, tid, 0, uintptr(p.pending[tid]))
			if err != nil && err != syscall.ESRCH {
				errs = append(errs, fmt.Errorf("liveproc: PTRACE_DETACH of thread %d of process %d: %w", tid, p.PID, err))
			}
		}
	})
	if !p.start.IsZero() {
		p.stopped = time.Since(p.start)
	}
	close(p.tr.req)
	p.tr = nil
	if p.mem != nil {
		p.mem.Close()
	}
	return p.stopped, errors.Join(errs...)
}

// ReadAt reads the process's memory at the virtual address addr, through
// /proc/PID/mem. An address the process has not mapped is an error.
func (p *Process) ReadAt(b []byte, addr int64) (int, error) {
	if p.mem == nil || p.tr == nil {
		return 0, fmt.Errorf("liveproc: reading %#x of process %d: %w", uint64(addr), p.PID, os.ErrClosed)
	}
	n, err := p.mem.ReadAt(b, addr)
	if err != nil {
		return n, fmt.Errorf("liveproc: reading %#x of process %d: %w", uint64(addr)+uint64(n), p.PID, err)
	}
	return n, nil
}

// maxMapsLine bounds a line of /proc/PID/maps: a path is at most PATH_MAX.
const maxMapsLine = 64 << 10

// Mappings returns the process's mappings, from /proc/PID/maps, by
// address. Path is the file mapped, or the kernel's name of a special
// mapping ("[stack]", "[vdso]", "[heap]"); "" for anonymous memory.
func (p *Process) Mappings() ([]elfcore.Mapping, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/maps")
	if err != nil {
		return nil, fmt.Errorf("liveproc: %w", err)
	}
	return parseMaps(data)
}

// parseMaps reads the lines of /proc/PID/maps:
//
//	start-end perms offset dev inode [path]
func parseMaps(data []byte) ([]elfcore.Mapping, error) {
	var maps []elfcore.Mapping
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxMapsLine)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) < 5 {
			return nil, fmt.Errorf("liveproc: maps line %d: %q", n, line)
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if !ok || err1 != nil || err2 != nil || err3 != nil || end < start || len(f[1]) < 3 {
			return nil, fmt.Errorf("liveproc: maps line %d: %q", n, line)
		}
		m := elfcore.Mapping{Start: start, End: end, Offset: off}
		for i, flag := range []elf.ProgFlag{elf.PF_R, elf.PF_W, elf.PF_X} {
			if f[1][i] != '-' {
				m.Flags |= flag
			}
		}
		// The path is the rest of the line after the inode, the fifth
		// field: it may hold spaces.
		rest := line
		for range 5 {
			rest = strings.TrimLeft(rest, " ")
			i := strings.IndexByte(rest, ' ')
			if i < 0 {
				i = len(rest)
			}
			rest = rest[i:]
		}
		m.Path = strings.TrimLeft(rest, " ")
		maps = append(maps, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("liveproc: maps: %w", err)
	}
	return maps, nil
}

// Image returns the process's executable: its entry point, from
// /proc/PID/auxv, and its build IDs, from its image in memory. Its
// Relocation with the executable's file gives the load bias.
func (p *Process) Image() (*elfcore.Image, error) {
	auxv, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/auxv")
	if err != nil {
		return nil, fmt.Errorf("liveproc: %w", err)
	}
	maps, err := p.Mappings()
	if err != nil {
		return nil, err
	}
	class := elf.ELFCLASS64
	if unsafe.Sizeof(uintptr(0)) == 4 {
		class = elf.ELFCLASS32
	}
	return elfcore.ReadImage(p, auxv, binary.NativeEndian, class, maps)
}
