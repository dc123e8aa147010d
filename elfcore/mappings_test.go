package elfcore

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
)

var le = binary.LittleEndian

// note is one ELF note: name, type, descriptor.
type note struct {
	name string
	typ  uint32
	desc []byte
}

// appendNotes appends notes in the ELF format (each part padded to 4).
func appendNotes(b []byte, notes ...note) []byte {
	pad := func(b []byte) []byte {
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	for _, n := range notes {
		b = le.AppendUint32(b, uint32(len(n.name)))
		b = le.AppendUint32(b, uint32(len(n.desc)))
		b = le.AppendUint32(b, n.typ)
		b = pad(append(b, n.name...))
		b = pad(append(b, n.desc...))
	}
	return b
}

// seg is a PT_LOAD segment of a test core or executable.
type seg struct {
	vaddr, memsz uint64
	flags        elf.ProgFlag
	data         []byte
}

// elf64 builds a little-endian 64-bit amd64 ELF file of type typ with
// entry point entry: a PT_NOTE of notes (in the file only), and the
// segments, each with its data in the file. The program headers follow
// the 64-byte ELF header, as linkers put them.
func elf64(typ elf.Type, entry uint64, notes []byte, segs []seg) []byte {
	nph := 1 + len(segs)
	off := uint64(64 + 56*nph)
	b := make([]byte, 64, off)
	copy(b, elf.ELFMAG)
	b[4], b[5], b[6] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
	le.PutUint16(b[16:], uint16(typ))
	le.PutUint16(b[18:], uint16(elf.EM_X86_64))
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[24:], entry)
	le.PutUint64(b[32:], 64) // e_phoff
	le.PutUint16(b[52:], 64)
	le.PutUint16(b[54:], 56)
	le.PutUint16(b[56:], uint16(nph))
	ph := func(typ elf.ProgType, flags elf.ProgFlag, off, vaddr, filesz, memsz uint64) {
		p := make([]byte, 56)
		le.PutUint32(p, uint32(typ))
		le.PutUint32(p[4:], uint32(flags))
		le.PutUint64(p[8:], off)
		le.PutUint64(p[16:], vaddr)
		le.PutUint64(p[24:], vaddr)
		le.PutUint64(p[32:], filesz)
		le.PutUint64(p[40:], memsz)
		b = append(b, p...)
	}
	data := notes
	ph(elf.PT_NOTE, elf.PF_R, off, 0, uint64(len(notes)), 0)
	for _, s := range segs {
		ph(elf.PT_LOAD, s.flags, off+uint64(len(data)), s.vaddr, uint64(len(s.data)), max(s.memsz, uint64(len(s.data))))
		data = append(data, s.data...)
	}
	return append(b, data...)
}

// auxv returns an amd64 auxiliary vector of the given pairs, AT_NULL last.
func auxv(kv ...uint64) []byte {
	var b []byte
	for _, v := range append(kv, 0, 0) {
		b = le.AppendUint64(b, v)
	}
	return b
}

// ntFileDesc returns an amd64 NT_FILE descriptor of the mappings (their
// offsets in 4 KiB pages).
func ntFileDesc(maps ...Mapping) []byte {
	b := le.AppendUint64(nil, uint64(len(maps)))
	b = le.AppendUint64(b, 4096)
	for _, m := range maps {
		b = le.AppendUint64(b, m.Start)
		b = le.AppendUint64(b, m.End)
		b = le.AppendUint64(b, m.Offset/4096)
	}
	for _, m := range maps {
		b = append(append(b, m.Path...), 0)
	}
	return b
}

// exeAt is a test executable and a core of a process that ran it at a
// load bias: the core holds the executable's first page (ELF header,
// program headers, notes) at its run-time address, as the kernel dumps
// it, an NT_FILE note naming it, and an auxiliary vector.
type exeAt struct {
	exe, core []byte
}

const (
	testLink  = 0x400000 // the test executable's link-time address
	testEntry = testLink + 0x100
)

func newExeAt(typ elf.Type, goID string, bias uint64) exeAt {
	notes := appendNotes(nil, note{"Go\x00\x00", noteGoBuildID, []byte(goID)})
	// The executable's one segment maps its whole file, headers included,
	// at testLink; its file is one page.
	hdrLen := 64 + 56*2
	page := make([]byte, 4096-hdrLen-len(notes))
	exe := elf64(typ, testEntry, notes, []seg{{vaddr: testLink, flags: elf.PF_R | elf.PF_X}})
	// Make the segment cover the file from offset 0: rewrite it.
	exe = append(exe, page...)
	p := exe[64+56:]
	le.PutUint64(p[8:], 0)
	le.PutUint64(p[32:], uint64(len(exe)))
	le.PutUint64(p[40:], uint64(len(exe)))
	// The PT_NOTE's vaddr: where the notes are in the segment.
	le.PutUint64(exe[64+16:], testLink+uint64(hdrLen))

	run := testLink + bias
	coreNotes := appendNotes(nil,
		note{"CORE\x00", ntAuxv, auxv(atPhdr, run+64, atPhent, 56, atPhnum, 2, atEntry, testEntry+bias)},
		note{"CORE\x00", ntFile, ntFileDesc(Mapping{Start: run, End: run + 4096, Path: "/bin/prog"})},
	)
	core := elf64(elf.ET_CORE, 0, coreNotes, []seg{
		{vaddr: run, flags: elf.PF_R | elf.PF_X, data: exe},
		{vaddr: 0xc000000000, memsz: 0x2000, flags: elf.PF_R | elf.PF_W, data: le.AppendUint64(nil, testEntry+bias+8)},
	})
	return exeAt{exe, core}
}

func TestMappingsAndImage(t *testing.T) {
	const bias = 0x555555554000 - testLink
	x := newExeAt(elf.ET_DYN, "abc/def", bias)
	f, err := NewFile(bytes.NewReader(x.core))
	if err != nil {
		t.Fatal(err)
	}
	maps := f.Mappings()
	want := []Mapping{ // by address
		{Start: 0xc000000000, End: 0xc000002000, Flags: elf.PF_R | elf.PF_W},
		{Start: testLink + bias, End: testLink + bias + 4096, Flags: elf.PF_R | elf.PF_X, Path: "/bin/prog"},
	}
	if len(maps) != len(want) || maps[0] != want[0] || maps[1] != want[1] {
		t.Errorf("Mappings:\n%+v\nwant\n%+v", maps, want)
	}
	im, err := f.Image()
	if err != nil {
		t.Fatal(err)
	}
	if im.Entry != testEntry+bias || im.Path != "/bin/prog" || im.GoBuildID != "abc/def" {
		t.Errorf("Image %+v", im)
	}
	exe, err := elf.NewFile(bytes.NewReader(x.exe))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := im.Relocation(exe)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Bias != bias || rel.Start != testLink || rel.End != testLink+4096 {
		t.Errorf("Relocation %+v", rel)
	}
	if rel.ToLink(testEntry+bias) != testEntry || rel.ToLink(0xc000000000) != 0xc000000000 ||
		rel.ToRun(testEntry) != testEntry+bias || rel.ToRun(0xc000000000) != 0xc000000000 {
		t.Error("ToLink, ToRun")
	}
	// A link-time address where the process did not have the executable
	// (a damaged return address) is moved out of the table's way, and
	// back.
	if v := rel.ToLink(testEntry); v != testEntry+bias || rel.ToRun(v) != testEntry {
		t.Errorf("ToLink(%#x) = %#x, ToRun of it %#x", testEntry, v, rel.ToRun(v))
	}
	// Through the view, the stack's return address is a link-time one,
	// and the image is at its link-time address.
	v := rel.View(f, 8, le)
	buf := make([]byte, 8)
	if _, err := v.ReadAt(buf, 0xc000000000); err != nil || le.Uint64(buf) != testEntry+8 {
		t.Errorf("view of the stack: %#x, %v", le.Uint64(buf), err)
	}
	buf = make([]byte, 4)
	if _, err := v.ReadAt(buf, testLink); err != nil || string(buf) != elf.ELFMAG {
		t.Errorf("view of the image: %q, %v", buf, err)
	}

	// Another build of the program: its build ID differs.
	other, _ := elf.NewFile(bytes.NewReader(newExeAt(elf.ET_DYN, "abc/xyz", 0).exe))
	if _, err := im.Relocation(other); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), `"abc/xyz"`) || !strings.Contains(err.Error(), `"abc/def"`) {
		t.Errorf("another build: %v", err)
	}
	// A fixed executable cannot be where the process had the image.
	fixed, _ := elf.NewFile(bytes.NewReader(newExeAt(elf.ET_EXEC, "abc/def", 0).exe))
	if _, err := im.Relocation(fixed); !errors.Is(err, ErrMismatch) {
		t.Errorf("ET_EXEC loaded elsewhere: %v", err)
	}
	// Without the image's pages the entry point alone is checked.
	im.GoBuildID = ""
	if rel, err := im.Relocation(other); err != nil || rel.Bias != bias {
		t.Errorf("no build ID in memory: %+v, %v", rel, err)
	}
}

func TestImageWithoutAuxv(t *testing.T) {
	f, err := NewFile(bytes.NewReader(miniCore(elf.EM_X86_64, elf.ELFCLASS64, le, 1, make([]uint64, 27), 0x1000, []byte("stack"))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Image(); err == nil || !strings.Contains(err.Error(), "AT_ENTRY") {
		t.Errorf("Image of a core without NT_AUXV: %v", err)
	}
	if m := f.Mappings(); len(m) != 1 || m[0].Path != "" {
		t.Errorf("Mappings %+v", m)
	}
}

// TestNTFileHostile checks that damaged NT_FILE notes are errors, and that
// what is allocated for one is bounded by its size, not by its count.
func TestNTFileHostile(t *testing.T) {
	good := ntFileDesc(Mapping{Start: 0x1000, End: 0x2000, Offset: 0x3000, Path: "/a"}, Mapping{Start: 0x2000, End: 0x5000, Path: "/b"})
	files, err := parseNTFile(good, le, 8)
	if err != nil || len(files) != 2 || files[0].Offset != 0x3000 || files[1].Path != "/b" {
		t.Fatalf("%+v %v", files, err)
	}
	set := func(i int, v uint64) []byte {
		b := bytes.Clone(good)
		le.PutUint64(b[8*i:], v)
		return b
	}
	for name, desc := range map[string][]byte{
		"short":          good[:12],
		"count 1<<40":    set(0, 1<<40),
		"count -1":       set(0, 1<<64-1),
		"count 3":        set(0, 3),
		"page size 0":    set(1, 0),
		"page size 3000": set(1, 3000),
		"end < start":    set(3, 0),
		"offset wraps":   set(4, 1<<60),
		"names missing":  good[:len(good)-3],
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		files, err := parseNTFile(desc, le, 8)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: no error, %+v", name, files)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 16<<10 {
			t.Errorf("%s: %d bytes allocated", name, got)
		}
	}
}

// FuzzNTFile feeds parseNTFile damaged NT_FILE descriptors, 64-bit (wide
// odd) and 32-bit: it must return an error or entries that the descriptor's size
// allows, each a range that does not run backwards.
func FuzzNTFile(f *testing.F) {
	fuzzseed.Add(f, ntFileDesc(Mapping{Start: 0x1000, End: 0x2000, Offset: 0x3000, Path: "/a"}, Mapping{Start: 0x2000, End: 0x5000, Path: "/b"}), uint8(1))
	fuzzseed.Add(f, []byte("\x01\x00\x00\x00\x00\x10\x00\x00\x00\x10\x00\x00\x00\x20\x00\x00\x01\x00\x00\x00/x\x00"), uint8(0))
	f.Fuzz(func(t *testing.T, desc []byte, wide uint8) {
		ptr := uint64(4)
		if wide&1 != 0 {
			ptr = 8
		}
		files, err := parseNTFile(desc, le, ptr)
		if err != nil {
			return
		}
		if uint64(len(files))*(3*ptr+1) > uint64(len(desc)) {
			t.Fatalf("%d files from %d bytes", len(files), len(desc))
		}
		for _, m := range files {
			if m.End < m.Start {
				t.Fatalf("entry %+v", m)
			}
		}
	})
}
