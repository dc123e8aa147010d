// Package elfcore reads ELF core files, as the Linux kernel, gdb's gcore
// and qemu-user write them: the memory of the dumped process (its PT_LOAD
// segments) and the registers of each of its threads (NT_PRSTATUS notes),
// named per architecture (File.RegNames, File.Reg). A File is the memory a
// gosym.Table.Unwind reads, and its threads' PC, SP and LR are where an
// unwind starts:
//
//	core, err := elfcore.NewFile(f)
//	...
//	for _, th := range core.Threads {
//		for fr, err := range tab.Unwind(gosym.Regs{PC: th.PC, SP: th.SP, LR: th.LR}, core) {
//			...
//		}
//	}
//
// A position-independent executable runs away from its link-time
// addresses, which a gosym.Table speaks: the core's Image (its auxiliary
// vector's entry point, and the build IDs of the executable in its memory)
// checks the binary given against the one the process ran and gives its
// Relocation, whose View and ToLink translate the core's addresses:
//
//	im, err := core.Image()
//	...
//	rel, err := im.Relocation(exe) // exe: the *elf.File of the binary; ErrMismatch if another
//	...
//	mem := rel.View(core, 8, core.ByteOrder)
//	regs := gosym.Regs{PC: rel.ToLink(th.PC), SP: th.SP, LR: rel.ToLink(th.LR)}
//
// Mappings lists the core's memory, with the files mapped (NT_FILE).
// Package liveproc reads a live process with the same types.
//
// Reading is bounded by the file: notes, segments and thread counts are
// checked against its size before anything is allocated for them.
package elfcore

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
)

// maxNotes bounds the size of the notes read into memory.
const maxNotes = 64 << 20

// File is an opened core file.
type File struct {
	Machine   elf.Machine
	ByteOrder binary.ByteOrder
	Class     elf.Class
	// Threads are the threads of the NT_PRSTATUS notes, in file order
	// (the kernel writes the thread that got the fatal signal first).
	Threads []Thread

	r     io.ReaderAt
	segs  []segment // by address
	files []Mapping // the NT_FILE note's entries, in note order
	auxv  []byte    // the NT_AUXV note's descriptor
}

// Thread is one thread's registers.
type Thread struct {
	PID    int      // the thread's ID
	Signal int      // pr_cursig: the signal being delivered, 0 if none
	PC     uint64   // program counter
	SP     uint64   // stack pointer
	LR     uint64   // link register (0 on 386 and amd64)
	Regs   []uint64 // the general registers, in the kernel's elf_gregset_t order
}

type segment struct {
	vaddr, filesz, memsz, off uint64
	flags                     elf.ProgFlag
}

// regLayout says where, in the kernel's elf_gregset_t of an architecture,
// the PC, SP and LR are (word indices; lr < 0: none).
type regLayout struct {
	goarch      string
	pc, sp, lr  int
	prRegOffset int // offset of pr_reg in struct elf_prstatus
}

func layoutOf(m elf.Machine, class elf.Class) (regLayout, bool) {
	// struct elf_prstatus puts pr_reg after 112 bytes on 64-bit targets,
	// 72 on 32-bit ones.
	off := 112
	if class == elf.ELFCLASS32 {
		off = 72
	}
	switch m {
	case elf.EM_X86_64:
		return regLayout{"amd64", 16, 19, -1, off}, true // rip, rsp in user_regs_struct
	case elf.EM_386:
		return regLayout{"386", 12, 15, -1, off}, true // eip, esp
	case elf.EM_AARCH64:
		return regLayout{"arm64", 32, 31, 30, off}, true // pc, sp, x30
	case elf.EM_ARM:
		return regLayout{"arm", 15, 13, 14, off}, true // r15, r13, r14
	case elf.EM_PPC64:
		return regLayout{"ppc64", 32, 1, 36, off}, true // nip, r1, link
	case elf.EM_S390:
		return regLayout{"s390x", 1, 17, 16, off}, true // psw addr, r15, r14
	case elf.EM_RISCV:
		return regLayout{"riscv64", 0, 2, 1, off}, true // pc, sp (x2), ra (x1)
	case elf.EM_LOONGARCH:
		return regLayout{"loong64", 33, 3, 1, off}, true // csr_era, r3, r1
	}
	return regLayout{}, false
}

// NewFile reads the core file in r.
func NewFile(r io.ReaderAt) (*File, error) {
	if err := checkTables(r); err != nil {
		return nil, err
	}
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, err
	}
	if ef.Type != elf.ET_CORE {
		return nil, fmt.Errorf("elfcore: not a core file (type %v)", ef.Type)
	}
	f := &File{Machine: ef.Machine, ByteOrder: ef.ByteOrder, Class: ef.Class, r: r}
	ptr := uint64(8)
	if ef.Class == elf.ELFCLASS32 {
		ptr = 4
	}
	lay, known := layoutOf(ef.Machine, ef.Class)
	var notes uint64
	for _, p := range ef.Progs {
		switch p.Type {
		case elf.PT_LOAD:
			if p.Vaddr+p.Memsz < p.Vaddr || p.Off+p.Filesz < p.Off || p.Filesz > p.Memsz && p.Memsz != 0 {
				return nil, fmt.Errorf("elfcore: PT_LOAD at %#x: bad sizes", p.Vaddr)
			}
			f.segs = append(f.segs, segment{p.Vaddr, p.Filesz, max(p.Memsz, p.Filesz), p.Off, p.Flags})
		case elf.PT_NOTE:
			if p.Filesz > maxNotes-notes {
				return nil, errors.New("elfcore: notes too large")
			}
			notes += p.Filesz
			// ReadAll grows with the bytes actually there, not with Filesz.
			data, err := io.ReadAll(p.Open())
			if err != nil || uint64(len(data)) != p.Filesz {
				return nil, fmt.Errorf("elfcore: reading notes at %#x: %d of %d bytes (%v)", p.Off, len(data), p.Filesz, err)
			}
			if err := f.parseNotes(data, lay, known, ptr); err != nil {
				return nil, err
			}
		}
	}
	sort.Slice(f.segs, func(i, j int) bool { return f.segs[i].vaddr < f.segs[j].vaddr })
	return f, nil
}

// GOARCH returns the GOARCH name of the core's machine, "" if unknown.
// ppc64 cores are "ppc64le" when little-endian.
func (f *File) GOARCH() string {
	lay, ok := layoutOf(f.Machine, f.Class)
	if !ok {
		return ""
	}
	if lay.goarch == "ppc64" && f.ByteOrder == binary.LittleEndian {
		return "ppc64le"
	}
	return lay.goarch
}

// parseNotes reads the notes of one PT_NOTE segment.
func (f *File) parseNotes(data []byte, lay regLayout, known bool, ptr uint64) error {
	bo := f.ByteOrder
	for len(data) > 0 {
		if len(data) < 12 {
			return errors.New("elfcore: truncated note header")
		}
		namesz, descsz, typ := uint64(bo.Uint32(data)), uint64(bo.Uint32(data[4:])), bo.Uint32(data[8:])
		data = data[12:]
		nameEnd := align4(namesz)
		if nameEnd > uint64(len(data)) {
			return errors.New("elfcore: truncated note name")
		}
		name := data[:namesz]
		data = data[nameEnd:]
		descEnd := align4(descsz)
		if descsz > uint64(len(data)) {
			return errors.New("elfcore: truncated note")
		}
		desc := data[:descsz]
		data = data[min(descEnd, uint64(len(data))):]
		if string(name) != "CORE\x00" {
			continue
		}
		switch typ {
		case ntFile:
			if f.files != nil {
				return errors.New("elfcore: two NT_FILE notes")
			}
			files, err := parseNTFile(desc, bo, ptr)
			if err != nil {
				return err
			}
			f.files = files
			continue
		case ntAuxv:
			f.auxv = desc
			continue
		case uint32(elf.NT_PRSTATUS):
		default:
			continue
		}
		th := Thread{}
		var pidOff, sigOff uint64 = 32, 12
		if f.Class == elf.ELFCLASS32 {
			pidOff = 24
		}
		if uint64(len(desc)) < pidOff+4 {
			return errors.New("elfcore: NT_PRSTATUS too short")
		}
		th.PID = int(int32(bo.Uint32(desc[pidOff:])))
		th.Signal = int(bo.Uint16(desc[sigOff:]))
		if known {
			regs := desc[min(uint64(lay.prRegOffset), uint64(len(desc))):]
			n := uint64(len(regs)) / ptr
			if n <= uint64(max(lay.pc, lay.sp, lay.lr)) {
				return errors.New("elfcore: NT_PRSTATUS registers truncated")
			}
			n = min(n, 64)
			th.Regs = make([]uint64, n)
			for i := range th.Regs {
				if ptr == 4 {
					th.Regs[i] = uint64(bo.Uint32(regs[4*i:]))
				} else {
					th.Regs[i] = bo.Uint64(regs[8*i:])
				}
			}
			th.PC, th.SP = th.Regs[lay.pc], th.Regs[lay.sp]
			if lay.lr >= 0 {
				th.LR = th.Regs[lay.lr]
			}
		}
		f.Threads = append(f.Threads, th)
	}
	return nil
}

func align4(n uint64) uint64 { return (n + 3) &^ 3 }

// ReadAt reads the dumped process's memory at virtual address addr. Parts
// of a segment that the core does not hold (beyond its file size) read as
// zeros, as the kernel leaves out pages never touched. It reads across
// adjacent segments; an address in no segment is an error.
func (f *File) ReadAt(p []byte, addr int64) (int, error) {
	n := 0
	a := uint64(addr)
	for n < len(p) {
		i := sort.Search(len(f.segs), func(i int) bool { return f.segs[i].vaddr+f.segs[i].memsz > a })
		if i == len(f.segs) || a < f.segs[i].vaddr {
			return n, fmt.Errorf("elfcore: address %#x not in the core", a)
		}
		s := f.segs[i]
		in := a - s.vaddr
		m := min(uint64(len(p)-n), s.memsz-in)
		if in < s.filesz {
			k := min(m, s.filesz-in)
			got, err := f.r.ReadAt(p[n:n+int(k)], int64(s.off+in))
			if uint64(got) < k {
				if err == nil {
					err = io.ErrUnexpectedEOF
				}
				return n + got, fmt.Errorf("elfcore: reading %#x: %w", a, err)
			}
			clear(p[n+int(k) : n+int(m)])
		} else {
			clear(p[n : n+int(m)])
		}
		n += int(m)
		a += m
	}
	return n, nil
}

// checkTables checks that the program and section header tables the ELF
// header of r claims are in r, before debug/elf allocates for them: a
// 64-byte file claiming 12,000 program headers made it allocate 10 MB.
// Extended numbering (PN_XNUM, or a section count of 0 with a table) is
// left to debug/elf, which bounds it.
func checkTables(r io.ReaderAt) error {
	var h [64]byte
	if _, err := r.ReadAt(h[:elf.EI_NIDENT], 0); err != nil {
		return nil // debug/elf says what is wrong
	}
	var bo binary.ByteOrder
	switch elf.Data(h[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		bo = binary.BigEndian
	default:
		return nil
	}
	var phoff, shoff uint64
	var phent, phnum, shent, shnum uint16
	switch elf.Class(h[elf.EI_CLASS]) {
	case elf.ELFCLASS64:
		if _, err := r.ReadAt(h[:64], 0); err != nil {
			return nil
		}
		phoff, shoff = bo.Uint64(h[32:]), bo.Uint64(h[40:])
		phent, phnum, shent, shnum = bo.Uint16(h[54:]), bo.Uint16(h[56:]), bo.Uint16(h[58:]), bo.Uint16(h[60:])
	case elf.ELFCLASS32:
		if _, err := r.ReadAt(h[:52], 0); err != nil {
			return nil
		}
		phoff, shoff = uint64(bo.Uint32(h[28:])), uint64(bo.Uint32(h[32:]))
		phent, phnum, shent, shnum = bo.Uint16(h[42:]), bo.Uint16(h[44:]), bo.Uint16(h[46:]), bo.Uint16(h[48:])
	default:
		return nil
	}
	for _, t := range []struct {
		what      string
		off       uint64
		ent, num  uint16
		extension uint16 // the count that says the real one is elsewhere
	}{
		{"program headers", phoff, phent, phnum, 0xffff},
		{"section headers", shoff, shent, shnum, 0},
	} {
		if t.num == 0 || t.num == t.extension || t.ent == 0 {
			continue
		}
		size := uint64(t.ent) * uint64(t.num)
		var b [1]byte
		if t.off+size < t.off || t.off+size > 1<<63 {
			return fmt.Errorf("elfcore: %d %s at %#x: past any file", t.num, t.what, t.off)
		}
		if _, err := r.ReadAt(b[:], int64(t.off+size-1)); err != nil {
			return fmt.Errorf("elfcore: %d %s of %d bytes at %#x: past the end of the file", t.num, t.what, t.ent, t.off)
		}
	}
	return nil
}
