package coretest

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
)

// Thread is a thread of a core that Mini builds: its ID and its
// registers, in the kernel's elf_gregset_t order.
type Thread struct {
	PID  uint32
	Regs []uint64
}

// Mini builds a small core file of the machine m: one PT_NOTE with an
// NT_PRSTATUS for each thread (in order, each with signal 6), and one
// PT_LOAD of the memory mem at addr, 16 bytes longer in memory than in
// the file.
func Mini(m elf.Machine, class elf.Class, bo binary.ByteOrder, threads []Thread, addr uint64, mem []byte) []byte {
	ptr := 8
	prReg := 112
	if class == elf.ELFCLASS32 {
		ptr, prReg = 4, 72
	}
	var note bytes.Buffer
	for _, th := range threads {
		desc := make([]byte, prReg+len(th.Regs)*ptr+4)
		pidOff := 32
		if class == elf.ELFCLASS32 {
			pidOff = 24
		}
		bo.PutUint32(desc[pidOff:], th.PID)
		bo.PutUint16(desc[12:], 6)
		for i, r := range th.Regs {
			if ptr == 4 {
				bo.PutUint32(desc[prReg+4*i:], uint32(r))
			} else {
				bo.PutUint64(desc[prReg+8*i:], r)
			}
		}
		binary.Write(&note, bo, []uint32{5, uint32(len(desc)), uint32(elf.NT_PRSTATUS)})
		note.WriteString("CORE\x00\x00\x00\x00")
		note.Write(desc)
		for note.Len()%4 != 0 {
			note.WriteByte(0)
		}
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
