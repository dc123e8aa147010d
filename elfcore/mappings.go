package elfcore

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
)

// ntFile is the type of the NT_FILE note ("FILE"): the files mapped into
// the process, as the Linux kernel and gdb's gcore write it.
const ntFile = 0x46494c45

// ntAuxv is the type of the NT_AUXV note: the auxiliary vector.
const ntAuxv = 6

// ErrMismatch reports an executable that is not the one the process ran:
// its build ID, or its entry point, differs from the mapped image's.
var ErrMismatch = errors.New("elfcore: executable mismatch")

// Mapping is a range of a process's address space: a PT_LOAD segment of a
// core file, or a line of /proc/PID/maps.
type Mapping struct {
	Start, End uint64       // the addresses [Start, End)
	Flags      elf.ProgFlag // elf.PF_R, PF_W, PF_X; 0 where the source does not say
	Offset     uint64       // the offset in Path of the byte at Start
	Path       string       // the file mapped; "" for anonymous memory, or where the source does not say
}

// parseNTFile reads the descriptor of an NT_FILE note: count and page
// size, count (start, end, page offset) words, then count NUL-terminated
// names. The count is checked against the descriptor's size before
// anything is allocated for it.
func parseNTFile(desc []byte, bo binary.ByteOrder, ptr uint64) ([]Mapping, error) {
	word := func(i uint64) uint64 {
		if ptr == 4 {
			return uint64(bo.Uint32(desc[4*i:]))
		}
		return bo.Uint64(desc[8*i:])
	}
	if uint64(len(desc)) < 2*ptr {
		return nil, errors.New("elfcore: NT_FILE too short")
	}
	count, page := word(0), word(1)
	// Each entry takes 3 words and at least one byte of name.
	if count > (uint64(len(desc))-2*ptr)/(3*ptr+1) {
		return nil, fmt.Errorf("elfcore: NT_FILE of %d bytes claims %d files", len(desc), count)
	}
	if page == 0 || page&(page-1) != 0 {
		return nil, fmt.Errorf("elfcore: NT_FILE page size %#x", page)
	}
	names := desc[(2+3*count)*ptr:]
	files := make([]Mapping, count)
	for i := range files {
		m := &files[i]
		m.Start, m.End = word(2+3*uint64(i)), word(3+3*uint64(i))
		pgoff := word(4 + 3*uint64(i))
		if m.End < m.Start || pgoff > (1<<64-1)/page {
			return nil, fmt.Errorf("elfcore: NT_FILE entry %d: range %#x-%#x, page offset %#x", i, m.Start, m.End, pgoff)
		}
		m.Offset = pgoff * page
		n := bytes.IndexByte(names, 0)
		if n < 0 {
			return nil, fmt.Errorf("elfcore: NT_FILE: %d names for %d files", i, count)
		}
		m.Path, names = string(names[:n]), names[n+1:]
	}
	return files, nil
}

// Mappings returns the core's mappings by address: one for each PT_LOAD
// segment (the bytes the core holds, and those it left out), with its
// permissions, and the file it maps and the offset there where the core
// has an NT_FILE note (the Linux kernel and gdb's gcore write one;
// qemu-user does not).
func (f *File) Mappings() []Mapping {
	files := append([]Mapping(nil), f.files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Start < files[j].Start })
	out := make([]Mapping, len(f.segs))
	for i, s := range f.segs {
		m := Mapping{Start: s.vaddr, End: s.vaddr + s.memsz, Flags: s.flags}
		// The last file mapping that starts at or below the segment.
		j := sort.Search(len(files), func(j int) bool { return files[j].Start > s.vaddr }) - 1
		if j >= 0 && s.vaddr < files[j].End {
			m.Path, m.Offset = files[j].Path, files[j].Offset+(s.vaddr-files[j].Start)
		}
		out[i] = m
	}
	return out
}

// Auxiliary vector tags (AT_* of <elf.h>).
const (
	atPhdr  = 3
	atPhent = 4
	atPhnum = 5
	atEntry = 9
)

// auxvValue returns the value of tag in the auxiliary vector auxv, pairs
// of words in the target's order.
func auxvValue(auxv []byte, bo binary.ByteOrder, ptr uint64, tag uint64) (uint64, bool) {
	for len(auxv) >= int(2*ptr) {
		var k, v uint64
		if ptr == 4 {
			k, v = uint64(bo.Uint32(auxv)), uint64(bo.Uint32(auxv[4:]))
		} else {
			k, v = bo.Uint64(auxv), bo.Uint64(auxv[8:])
		}
		if k == tag {
			return v, true
		}
		if k == 0 { // AT_NULL
			break
		}
		auxv = auxv[2*ptr:]
	}
	return 0, false
}

// Image is the main executable of a process, as the process's auxiliary
// vector and memory show it.
type Image struct {
	Entry uint64 // AT_ENTRY: the run-time address of the entry point
	Phdr  uint64 // AT_PHDR: the run-time address of the program headers
	Path  string // the file of the mapping that holds Entry; "" if unknown
	// GoBuildID and GNUBuildID are the build IDs in the notes of the
	// mapped image (as object.BuildIDs reads them from the file); ""
	// where the memory does not hold them (a core written without the
	// executable's first page, as qemu-user writes them).
	GoBuildID, GNUBuildID string
}

// Image returns the core's main executable: its entry point from the
// NT_AUXV note, and its build IDs from the image in the core's memory.
// It is an error if the core has no NT_AUXV note with an entry point.
func (f *File) Image() (*Image, error) {
	return ReadImage(f, f.auxv, f.ByteOrder, f.Class, f.Mappings())
}

// maxImageNotes bounds the notes read from a mapped image, and from an
// executable.
const maxImageNotes = 64 << 10

// ReadImage returns the main executable of a process whose memory is
// mem, whose auxiliary vector (as /proc/PID/auxv or an NT_AUXV note holds
// it) is auxv, in the byte order and class of the process, and whose
// mappings are maps. The executable's build IDs are read from its ELF
// header, program headers and notes in mem, where mem holds them.
func ReadImage(mem io.ReaderAt, auxv []byte, bo binary.ByteOrder, class elf.Class, maps []Mapping) (*Image, error) {
	ptr := uint64(8)
	if class == elf.ELFCLASS32 {
		ptr = 4
	}
	entry, ok := auxvValue(auxv, bo, ptr, atEntry)
	if !ok {
		return nil, errors.New("elfcore: no entry point (AT_ENTRY) in the auxiliary vector: the executable cannot be placed")
	}
	im := &Image{Entry: entry}
	im.Phdr, _ = auxvValue(auxv, bo, ptr, atPhdr)
	for _, m := range maps {
		if m.Start <= entry && entry < m.End {
			im.Path = m.Path
		}
	}
	phent, _ := auxvValue(auxv, bo, ptr, atPhent)
	phnum, _ := auxvValue(auxv, bo, ptr, atPhnum)
	im.GNUBuildID, im.GoBuildID = imageBuildIDs(mem, bo, ptr, im.Entry, im.Phdr, phent, phnum)
	return im, nil
}

// imageBuildIDs reads the build IDs of an executable mapped in mem, whose
// program headers (phnum of phent bytes) are at phdr: the first PT_NOTE
// that holds one, placed by the load bias the ELF header just before the
// program headers gives (entry minus e_entry). Any part not in mem reads
// as no build ID.
func imageBuildIDs(mem io.ReaderAt, bo binary.ByteOrder, ptr, entry, phdr, phent, phnum uint64) (gnu, goID string) {
	ehsize, wantPhent := uint64(64), uint64(56)
	if ptr == 4 {
		ehsize, wantPhent = 52, 32
	}
	if phdr < ehsize || phent != wantPhent || phnum == 0 || phnum > 1<<10 {
		return "", ""
	}
	// Linkers put the program headers right after the ELF header.
	hdr := make([]byte, ehsize)
	if _, err := mem.ReadAt(hdr, int64(phdr-ehsize)); err != nil || string(hdr[:4]) != elf.ELFMAG {
		return "", ""
	}
	var eEntry, ePhoff uint64
	if ptr == 4 {
		eEntry, ePhoff = uint64(bo.Uint32(hdr[24:])), uint64(bo.Uint32(hdr[28:]))
	} else {
		eEntry, ePhoff = bo.Uint64(hdr[24:]), bo.Uint64(hdr[32:])
	}
	if ePhoff != ehsize {
		return "", ""
	}
	bias := entry - eEntry
	phdrs := make([]byte, phnum*phent)
	if _, err := mem.ReadAt(phdrs, int64(phdr)); err != nil {
		return "", ""
	}
	var buf []byte
	budget := 0 // note bytes read
	for i := uint64(0); i < phnum && (gnu == "" || goID == ""); i++ {
		p := phdrs[i*phent:]
		if bo.Uint32(p) != uint32(elf.PT_NOTE) {
			continue
		}
		var vaddr, filesz uint64
		if ptr == 4 {
			vaddr, filesz = uint64(bo.Uint32(p[8:])), uint64(bo.Uint32(p[16:]))
		} else {
			vaddr, filesz = bo.Uint64(p[16:]), bo.Uint64(p[32:])
		}
		// At most maxImageNotes bytes in all, in one buffer: a hostile
		// image may have a thousand note segments.
		n := int(min(filesz, uint64(maxImageNotes-budget)))
		if n == 0 {
			break
		}
		budget += n
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		data := buf[:n]
		if _, err := mem.ReadAt(data, int64(vaddr+bias)); err != nil {
			continue
		}
		g, o := noteBuildIDs(data, bo)
		gnu, goID = cmp(gnu, g), cmp(goID, o)
	}
	return gnu, goID
}

// cmp returns a if it is not empty, else b.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Note types of the build IDs (object.BuildIDs reads the same).
const (
	noteGNUBuildID = 3 // NT_GNU_BUILD_ID, owner "GNU"
	noteGoBuildID  = 4 // the Go linker's build ID note, owner "Go"
)

// noteBuildIDs returns the GNU build ID (in hex) and the Go build ID among
// the ELF notes in data, stopping at the first malformed note.
func noteBuildIDs(data []byte, bo binary.ByteOrder) (gnu, goID string) {
	for len(data) >= 12 {
		namesz, descsz, typ := uint64(bo.Uint32(data)), uint64(bo.Uint32(data[4:])), bo.Uint32(data[8:])
		rest := data[12:]
		if align4(namesz) > uint64(len(rest)) || align4(namesz)+descsz > uint64(len(rest)) {
			break
		}
		name, desc := string(rest[:namesz]), rest[align4(namesz):align4(namesz)+descsz]
		switch {
		case typ == noteGNUBuildID && name == "GNU\x00" && gnu == "":
			gnu = hex.EncodeToString(desc)
		case typ == noteGoBuildID && name == "Go\x00\x00" && goID == "":
			goID = string(desc)
		}
		data = rest[min(align4(namesz)+align4(descsz), uint64(len(rest))):]
	}
	return gnu, goID
}

// fileBuildIDs returns the build IDs in the notes of the ELF file exe.
func fileBuildIDs(exe *elf.File) (gnu, goID string, err error) {
	for _, p := range exe.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(p.Open(), maxImageNotes))
		if err != nil {
			return "", "", fmt.Errorf("elfcore: reading the notes of the executable: %w", err)
		}
		g, o := noteBuildIDs(data, exe.ByteOrder)
		gnu, goID = cmp(gnu, g), cmp(goID, o)
	}
	return gnu, goID, nil
}

// Relocation is where a process loaded its executable: the executable's
// link-time addresses [Start, End) (its PT_LOAD segments) are at
// [Start+Bias, End+Bias) in the process. Bias is 0 for an executable
// loaded where it was linked (ET_EXEC); a position-independent one
// (ET_DYN, -buildmode=pie) is moved.
type Relocation struct {
	Bias       uint64
	Start, End uint64
}

// Relocation checks that exe is the executable of the image, and returns
// where it is loaded. The image's build IDs, where memory holds them, must
// be exe's, and an executable that cannot be moved (ET_EXEC) must be where
// it was linked; otherwise the error wraps ErrMismatch and names both.
// Where memory holds no build ID the check rests on the entry point alone.
func (im *Image) Relocation(exe *elf.File) (Relocation, error) {
	gnu, goID, err := fileBuildIDs(exe)
	if err != nil {
		return Relocation{}, err
	}
	switch {
	case im.GoBuildID != "" && im.GoBuildID != goID:
		return Relocation{}, fmt.Errorf("%w: the executable's Go build ID is %q, the process ran %q", ErrMismatch, goID, im.GoBuildID)
	case im.GNUBuildID != "" && im.GNUBuildID != gnu:
		return Relocation{}, fmt.Errorf("%w: the executable's GNU build ID is %q, the process ran %q", ErrMismatch, gnu, im.GNUBuildID)
	}
	r := Relocation{Bias: im.Entry - exe.Entry, Start: ^uint64(0)}
	if exe.Type != elf.ET_DYN && r.Bias != 0 {
		return Relocation{}, fmt.Errorf("%w: the executable's entry point is %#x, the process's %#x, and the executable cannot be moved (%v)", ErrMismatch, exe.Entry, im.Entry, exe.Type)
	}
	for _, p := range exe.Progs {
		if p.Type == elf.PT_LOAD && p.Vaddr+p.Memsz >= p.Vaddr {
			r.Start, r.End = min(r.Start, p.Vaddr), max(r.End, p.Vaddr+p.Memsz)
		}
	}
	if r.End == 0 {
		return Relocation{}, errors.New("elfcore: the executable has no PT_LOAD segment")
	}
	if r.Bias != 0 && r.Start < r.End+r.Bias && r.Start+r.Bias < r.End {
		// The two views would overlap: an address would be ambiguous.
		return Relocation{}, fmt.Errorf("elfcore: the executable's addresses %#x-%#x overlap where it is loaded (bias %#x)", r.Start, r.End, r.Bias)
	}
	return r, nil
}

// ToLink returns the link-time address of the run-time address v, if v is
// in the executable. The two ranges do not overlap (Relocation checks),
// and ToLink exchanges them: a v at one of the executable's link-time
// addresses, where the process did not have it, is moved to where the
// process had the executable (v+Bias), so that a table never takes it for
// one of its own addresses (a damaged return address of a PIE linked at 0,
// say), and ToRun gives it back. Any other v is returned as it is.
func (r Relocation) ToLink(v uint64) uint64 {
	switch {
	case r.Bias == 0:
		return v
	case v-r.Bias >= r.Start && v-r.Bias < r.End:
		return v - r.Bias
	case v >= r.Start && v < r.End:
		return v + r.Bias
	}
	return v
}

// ToRun returns the run-time address of the link-time address v, if v is
// in the executable: the inverse of ToLink, which is its own inverse.
func (r Relocation) ToRun(v uint64) uint64 { return r.ToLink(v) }

// View returns the process memory mem as a gosym.Table reads it, at the
// executable's link-time addresses (see gosym.Table.Unwind): a read at an
// address a reads mem at ToRun(a), so the executable is at its link-time
// addresses; and a read of one pointer (ptrSize bytes) returns the
// pointer's ToLink, so a run-time address in the executable reads as its
// link-time address. Table.Unwind reads only return addresses and stack
// words through it. A pointer-sized value that is not an address but
// happens to equal one of the executable's is translated too: a caller
// that reads other data should read mem itself. With Bias 0, mem is
// returned as it is.
func (r Relocation) View(mem io.ReaderAt, ptrSize int, bo binary.ByteOrder) io.ReaderAt {
	if r.Bias == 0 {
		return mem
	}
	return &linkView{mem: mem, r: r, ptr: ptrSize, bo: bo}
}

type linkView struct {
	mem io.ReaderAt
	r   Relocation
	ptr int
	bo  binary.ByteOrder
}

func (v *linkView) ReadAt(p []byte, off int64) (int, error) {
	n, err := v.mem.ReadAt(p, int64(v.r.ToRun(uint64(off))))
	if n == len(p) && len(p) == v.ptr {
		if v.ptr == 4 {
			v.bo.PutUint32(p, uint32(v.r.ToLink(uint64(v.bo.Uint32(p)))))
		} else {
			v.bo.PutUint64(p, v.r.ToLink(v.bo.Uint64(p)))
		}
	}
	return n, err
}
