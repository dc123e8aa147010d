package elfcore

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"testing"

	"github.com/gosym-dev/gosym/internal/coretest"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
)

// miniCore builds a small core file of one thread (coretest.Mini).
func miniCore(m elf.Machine, class elf.Class, bo binary.ByteOrder, pid uint32, regs []uint64, addr uint64, mem []byte) []byte {
	return coretest.Mini(m, class, bo, []coretest.Thread{{PID: pid, Regs: regs}}, addr, mem)
}

func TestMiniCore(t *testing.T) {
	regs := make([]uint64, 34)
	regs[32], regs[31], regs[30] = 0x401000, 0xc000100, 0x402000 // pc, sp, x30
	data := miniCore(elf.EM_AARCH64, elf.ELFCLASS64, binary.LittleEndian, 77, regs, 0xc000000, []byte("0123456789abcdef"))
	f, err := NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if f.GOARCH() != "arm64" || len(f.Threads) != 1 {
		t.Fatalf("GOARCH %q, %d threads", f.GOARCH(), len(f.Threads))
	}
	th := f.Threads[0]
	if th.PID != 77 || th.Signal != 6 || th.PC != 0x401000 || th.SP != 0xc000100 || th.LR != 0x402000 {
		t.Errorf("thread %+v", th)
	}
	buf := make([]byte, 20)
	if n, err := f.ReadAt(buf, 0xc00000c); err != nil || n != 20 || string(buf[:4]) != "cdef" || buf[4] != 0 {
		t.Errorf("ReadAt: %d %v %q", n, err, buf)
	}
	if _, err := f.ReadAt(buf, 0xc000010); err == nil {
		t.Errorf("ReadAt past the segment succeeded")
	}

	regs32 := make([]uint64, 17)
	regs32[12], regs32[15] = 0x8049000, 0x9000000 // eip, esp
	data = miniCore(elf.EM_386, elf.ELFCLASS32, binary.LittleEndian, 5, regs32, 0x9000000, []byte{1, 2, 3, 4})
	if f, err = NewFile(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if th := f.Threads[0]; f.GOARCH() != "386" || th.PC != 0x8049000 || th.SP != 0x9000000 || th.LR != 0 {
		t.Errorf("386: %q %+v", f.GOARCH(), th)
	}
	if v, ok := f.Reg(f.Threads[0], "eip"); !ok || v != 0x8049000 {
		t.Errorf("386: Reg(eip) = %#x, %v", v, ok)
	}
	if _, ok := f.Reg(f.Threads[0], "rip"); ok {
		t.Error("386: Reg(rip) found")
	}
}

// TestCrashCores reads the cores coretest makes on every architecture it
// can (written by the kernel, or by qemu-user): the core must hold one
// thread for each thread that printed its stack when the runtime relayed
// SIGQUIT ("SIGQUIT: quit" sections), with distinct thread IDs.
func TestCrashCores(t *testing.T) {
	for _, tg := range coretest.Targets {
		t.Run(tg.GOARCH, func(t *testing.T) {
			if tg.GOARCH != "amd64" {
				objtest.SkipUnlessHeavy(t) // qemu-user runs
			}
			t.Parallel()
			dir := t.TempDir()
			run, err := coretest.Crash(dir, tg, "")
			if errors.Is(err, coretest.ErrUnavailable) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			fh, err := os.Open(run.Core)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			f, err := NewFile(fh)
			if err != nil {
				t.Fatal(err)
			}
			if f.GOARCH() != tg.GOARCH {
				t.Errorf("GOARCH %q", f.GOARCH())
			}
			sections := bytes.Count([]byte(run.Output), []byte("SIGQUIT: quit\n"))
			if len(f.Threads) != sections {
				t.Errorf("%d threads in the core, %d threads printed their stacks", len(f.Threads), sections)
			}
			seen := map[int]bool{}
			for _, th := range f.Threads {
				if seen[th.PID] || th.PID <= 0 {
					t.Errorf("thread ID %d twice or invalid", th.PID)
				}
				seen[th.PID] = true
			}
		})
	}
}

// FuzzNewFile feeds NewFile damaged cores: it must return an error or a
// File whose every thread and memory read stays in bounds.
func FuzzNewFile(f *testing.F) {
	regs := make([]uint64, 40)
	for i := range regs {
		regs[i] = uint64(i) * 0x1000
	}
	fuzzseed.Add(f, miniCore(elf.EM_X86_64, elf.ELFCLASS64, binary.LittleEndian, 1, regs[:27], 0x1000, []byte("stack")))
	fuzzseed.Add(f, miniCore(elf.EM_PPC64, elf.ELFCLASS64, binary.BigEndian, 2, regs, 0x2000, []byte("stack")))
	fuzzseed.Add(f, miniCore(elf.EM_ARM, elf.ELFCLASS32, binary.LittleEndian, 3, regs[:18], 0x3000, []byte("stack")))
	// A core with NT_AUXV and NT_FILE notes, and an executable's image
	// (Mappings, Image).
	fuzzseed.Add(f, newExeAt(elf.ET_DYN, "abc/def", 0x10000000).core)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		_ = c.GOARCH()
		buf := make([]byte, 64)
		for _, th := range c.Threads {
			c.ReadAt(buf, int64(th.SP))
		}
		for _, s := range c.segs {
			c.ReadAt(buf, int64(s.vaddr))
		}
		if maps := c.Mappings(); len(maps) != len(c.segs) {
			t.Fatalf("%d mappings of %d segments", len(maps), len(c.segs))
		}
		c.Image()
	})
}

// TestBoundedReads checks that NewFile reads no more than the core holds:
// a PT_NOTE whose size is far beyond the file, or beyond maxNotes, is an
// error, and what NewFile allocates is in proportion with the file, not
// with the sizes it claims; and that the threads it returns are no more
// than the notes' bytes allow.
func TestBoundedReads(t *testing.T) {
	regs := make([]uint64, 27)
	core := miniCore(elf.EM_X86_64, elf.ELFCLASS64, binary.LittleEndian, 1, regs, 0x1000, []byte("stack"))
	// The PT_NOTE header is the first after the 64-byte ELF header; its
	// p_filesz is at offset 32 in it.
	const filesz = 64 + 32
	for _, size := range []uint64{1 << 20, maxNotes - 1, maxNotes + 1, 1 << 40, 1<<64 - 1} {
		data := bytes.Clone(core)
		binary.LittleEndian.PutUint64(data[filesz:], size)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := NewFile(bytes.NewReader(data))
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("notes of %d bytes in a core of %d: no error", size, len(data))
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
			t.Errorf("notes of %d bytes in a core of %d: %d bytes allocated", size, len(data), got)
		}
	}

	// Many threads: as many as fit in the notes.
	var ths []coretest.Thread
	for i := range 1000 {
		ths = append(ths, coretest.Thread{PID: uint32(i + 1), Regs: regs})
	}
	data := coretest.Mini(elf.EM_X86_64, elf.ELFCLASS64, binary.LittleEndian, ths, 0x1000, []byte("stack"))
	f, err := NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Threads) != len(ths) {
		t.Errorf("%d threads, want %d", len(f.Threads), len(ths))
	}
	if per := len(data) / len(f.Threads); per < 112+27*8 {
		t.Errorf("a thread for every %d bytes of the core", per)
	}
}

// TestRegNames checks each architecture's names against where the package
// takes the PC, SP and LR from (layoutOf, from the kernel's headers).
func TestRegNames(t *testing.T) {
	for _, c := range []struct {
		m      elf.Machine
		pc, sp string
		lr     string
	}{
		{elf.EM_X86_64, "rip", "rsp", ""},
		{elf.EM_386, "eip", "esp", ""},
		{elf.EM_AARCH64, "pc", "sp", "x30"},
		{elf.EM_ARM, "r15", "r13", "r14"},
		{elf.EM_PPC64, "nip", "r1", "link"},
		{elf.EM_S390, "psw_addr", "r15", "r14"},
		{elf.EM_RISCV, "pc", "sp", "ra"},
		{elf.EM_LOONGARCH, "csr_era", "r3", "r1"},
	} {
		lay, ok := layoutOf(c.m, elf.ELFCLASS64)
		if !ok {
			t.Fatalf("%v: no layout", c.m)
		}
		names := regNames[lay.goarch]
		if names[lay.pc] != c.pc || names[lay.sp] != c.sp || lay.lr >= 0 && names[lay.lr] != c.lr {
			t.Errorf("%s: pc %q sp %q lr %q", lay.goarch, names[lay.pc], names[lay.sp], c.lr)
		}
	}
}

// TestHeaderTablesBounded checks that NewFile allocates in proportion to
// the file, not to the header tables its ELF header claims: a 64-byte file
// (found by FuzzNewFile) claims 12,336 program headers, for which
// debug/elf allocated 10 MB; tables past the end of the file are errors.
func TestHeaderTablesBounded(t *testing.T) {
	bomb := []byte("\x7fELF\x02\x02\x010000000000000000\x01000000000000000000000000000000000000\x00\x0000")
	core := miniCore(elf.EM_X86_64, elf.ELFCLASS64, binary.LittleEndian, 1, make([]uint64, 27), 0x1000, []byte("stack"))
	shnum := bytes.Clone(core)
	binary.LittleEndian.PutUint16(shnum[58:], 64)     // e_shentsize
	binary.LittleEndian.PutUint16(shnum[60:], 0xfff0) // e_shnum
	binary.LittleEndian.PutUint64(shnum[40:], 64)     // e_shoff
	phnum := bytes.Clone(core)
	binary.LittleEndian.PutUint16(phnum[56:], 0xfffe)
	for name, data := range map[string][]byte{"fuzz": bomb, "e_shnum": shnum, "e_phnum": phnum} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := NewFile(bytes.NewReader(data))
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
			t.Errorf("%s: %d bytes allocated for a file of %d: %v", name, got, len(data), err)
		}
	}
}
