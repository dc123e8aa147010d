package elfcore

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/gosym-dev/gosym/internal/elfcore/coretest"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
)

// miniCore builds a small core file: one PT_NOTE with an NT_PRSTATUS of
// the given machine, and one PT_LOAD of memory at addr.
func miniCore(m elf.Machine, class elf.Class, bo binary.ByteOrder, pid uint32, regs []uint64, addr uint64, mem []byte) []byte {
	ptr := 8
	prReg := 112
	if class == elf.ELFCLASS32 {
		ptr, prReg = 4, 72
	}
	desc := make([]byte, prReg+len(regs)*ptr+4)
	pidOff := 32
	if class == elf.ELFCLASS32 {
		pidOff = 24
	}
	bo.PutUint32(desc[pidOff:], pid)
	bo.PutUint16(desc[12:], 6)
	for i, r := range regs {
		if ptr == 4 {
			bo.PutUint32(desc[prReg+4*i:], uint32(r))
		} else {
			bo.PutUint64(desc[prReg+8*i:], r)
		}
	}
	var note bytes.Buffer
	binary.Write(&note, bo, []uint32{5, uint32(len(desc)), uint32(elf.NT_PRSTATUS)})
	note.WriteString("CORE\x00\x00\x00\x00")
	note.Write(desc)
	for note.Len()%4 != 0 {
		note.WriteByte(0)
	}

	var b bytes.Buffer
	ehsize, phsize := 64, 56
	if class == elf.ELFCLASS32 {
		ehsize, phsize = 52, 32
	}
	noteOff := uint64(ehsize + 2*phsize)
	memOff := noteOff + uint64(note.Len())
	ident := [16]byte{0x7f, 'E', 'L', 'F', byte(class), 1, 1}
	if bo == binary.BigEndian {
		ident[5] = 2
	}
	b.Write(ident[:])
	if class == elf.ELFCLASS64 {
		binary.Write(&b, bo, header64tail{Type: uint16(elf.ET_CORE), Machine: uint16(m), Version: 1,
			Phoff: uint64(ehsize), Ehsize: uint16(ehsize), Phentsize: uint16(phsize), Phnum: 2})
		binary.Write(&b, bo, elf.Prog64{Type: uint32(elf.PT_NOTE), Off: noteOff, Filesz: uint64(note.Len())})
		binary.Write(&b, bo, elf.Prog64{Type: uint32(elf.PT_LOAD), Off: memOff, Vaddr: addr, Filesz: uint64(len(mem)), Memsz: uint64(len(mem)) + 16})
	} else {
		binary.Write(&b, bo, header32tail{Type: uint16(elf.ET_CORE), Machine: uint16(m), Version: 1,
			Phoff: uint32(ehsize), Ehsize: uint16(ehsize), Phentsize: uint16(phsize), Phnum: 2})
		binary.Write(&b, bo, elf.Prog32{Type: uint32(elf.PT_NOTE), Off: uint32(noteOff), Filesz: uint32(note.Len())})
		binary.Write(&b, bo, elf.Prog32{Type: uint32(elf.PT_LOAD), Off: uint32(memOff), Vaddr: uint32(addr), Filesz: uint32(len(mem)), Memsz: uint32(len(mem)) + 16})
	}
	b.Write(note.Bytes())
	b.Write(mem)
	return b.Bytes()
}

// header64tail and header32tail are the ELF header after e_ident.
type header64tail struct {
	Type, Machine                                        uint16
	Version                                              uint32
	Entry, Phoff, Shoff                                  uint64
	Flags                                                uint32
	Ehsize, Phentsize, Phnum, Shentsize, Shnum, Shstrndx uint16
}

type header32tail struct {
	Type, Machine                                        uint16
	Version, Entry, Phoff, Shoff, Flags                  uint32
	Ehsize, Phentsize, Phnum, Shentsize, Shnum, Shstrndx uint16
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
	})
}
