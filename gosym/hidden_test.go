package gosym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// The tests of this file transform real binaries, built at test time by
// the installed toolchain, the way garble, a future release or a build
// system would, and check that every function answers exactly as in the
// original (TESTING.md, "Day zero and hidden tables").

// elfPclntab returns the file offset of the .gopclntab section of an ELF
// file and the byte order.
func elfPclntab(t *testing.T, bin []byte) (off uint64, size uint64, bo binary.ByteOrder) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(".gopclntab")
	if s == nil {
		t.Fatal("no .gopclntab")
	}
	return s.Offset, s.Size, f.ByteOrder
}

// garbleELF returns a copy of bin transformed as garble's linker does: the
// pclntab magic replaced by magic, and, if key is not 0, each function
// record's entry offset XORed with its name offset times key.
func garbleELF(t *testing.T, bin []byte, magic, key uint32) []byte {
	t.Helper()
	b := slices.Clone(bin)
	off, size, bo := elfPclntab(t, b)
	tab := b[off : off+size]
	h, err := parseHeader(tab)
	if err != nil {
		t.Fatal(err)
	}
	funcs := uint64(len(tab) - len(h.funcs))
	for i := uint64(0); i < h.nfunc; i++ {
		rec := tab[funcs+uint64(bo.Uint32(h.functab[i*8+4:])):]
		bo.PutUint32(rec, bo.Uint32(rec)^bo.Uint32(rec[4:])*key)
	}
	bo.PutUint32(tab, magic)
	return b
}

// dropTextStart returns a copy of bin whose 1.18+ pclntab header has lost
// its textStart word, as a release may drop it: every sub-table moves one
// word down, and the moduledata's pointers into the pclntab with them.
func dropTextStart(t *testing.T, bin []byte) []byte {
	t.Helper()
	b := slices.Clone(bin)
	off, size, bo := elfPclntab(t, b)
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	p := uint64(8)
	if f.Class == elf.ELFCLASS32 {
		p = 4
	}
	word := func(x []byte) uint64 {
		if p == 4 {
			return uint64(bo.Uint32(x))
		}
		return bo.Uint64(x)
	}
	put := func(x []byte, v uint64) {
		if p == 4 {
			bo.PutUint32(x, uint32(v))
		} else {
			bo.PutUint64(x, v)
		}
	}
	tab := b[off : off+size]
	// Words: nfunc nfiles textStart funcname cu filetab pctab pcln.
	for i := uint64(3); i < 8; i++ {
		put(tab[8+(i-1)*p:], word(tab[8+i*p:])-p)
	}
	md := f.Section(".go.module")
	if md == nil {
		t.Fatal("no .go.module")
	}
	addr := f.Section(".gopclntab").Addr
	mdb := b[md.Offset : md.Offset+md.Size]
	// Move the table, up to go:func.* (moduledata.gofunc) where the
	// section holds it too: funcdata offsets are from there.
	end := size
	if gofunc := word(mdb[40*p:]); gofunc > addr && gofunc < addr+size {
		end = gofunc - addr
	}
	copy(tab[8+7*p:end-p], tab[8+8*p:end])
	// The slices into the pclntab: funcnametab, cutab, filetab, pctab,
	// pclntable, ftab (moduledata words 1, 4, 7, 10, 13, 16).
	for _, w := range []uint64{1, 4, 7, 10, 13, 16} {
		v := word(mdb[w*p:])
		if v <= addr || v >= addr+size {
			t.Fatalf("moduledata word %d = %#x, not in the pclntab", w, v)
		}
		put(mdb[w*p:], v-p)
	}
	return b
}

// renameSection returns a copy of an ELF file whose section name was
// replaced by one of the same length.
func renameSection(t *testing.T, bin []byte, from, to string) []byte {
	t.Helper()
	if len(from) != len(to) {
		t.Fatal("names of different lengths")
	}
	b := slices.Clone(bin)
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	shstr := f.Section(".shstrtab")
	names := b[shstr.Offset : shstr.Offset+shstr.Size]
	i := bytes.Index(names, []byte(from+"\x00"))
	if i < 0 {
		t.Fatalf("no section name %s", from)
	}
	copy(names[i:], to)
	return b
}

// mergeSection returns a copy of an ELF file whose .gopclntab section is
// merged into the section before it, as in Amazon Linux's containerd
// (.data.rel.ro holds the table): the one before grows to cover it, and
// .gopclntab's header becomes an unused (SHT_NULL) one.
func mergeSection(t *testing.T, bin []byte) []byte {
	t.Helper()
	b := slices.Clone(bin)
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if f.Class != elf.ELFCLASS64 {
		t.Fatal("mergeSection handles ELFCLASS64")
	}
	bo := f.ByteOrder
	shoff := bo.Uint64(b[0x28:])
	shentsize := uint64(bo.Uint16(b[0x3a:]))
	i := slices.IndexFunc(f.Sections, func(s *elf.Section) bool { return s.Name == ".gopclntab" })
	prev := f.Sections[i-1]
	cur := f.Sections[i]
	// sh_size of the previous section: to the pclntab's end.
	bo.PutUint64(b[shoff+uint64(i-1)*shentsize+0x20:], cur.Addr+cur.Size-prev.Addr)
	// .gopclntab: SHT_NULL, no flags.
	bo.PutUint32(b[shoff+uint64(i)*shentsize+4:], uint32(elf.SHT_NULL))
	bo.PutUint64(b[shoff+uint64(i)*shentsize+8:], 0)
	return b
}

// checkSameAnswers checks that every function of got answers as in want:
// name, entry, end, and the inline stack at every PC.
func checkSameAnswers(t *testing.T, want, got *Table) {
	t.Helper()
	if want.NumFunctions() != got.NumFunctions() {
		t.Fatalf("%d functions, want %d", got.NumFunctions(), want.NumFunctions())
	}
	var wl, gl []Location
	pcs, bad := 0, 0
	for f, err := range want.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		for pc := f.Entry(); pc < f.End(); pc++ {
			var err1, err2 error
			wl, err1 = want.ResolveLocations(pc, wl[:0])
			gl, err2 = got.ResolveLocations(pc, gl[:0])
			pcs++
			if (err1 == nil) != (err2 == nil) || !slices.Equal(wl, gl) {
				if bad++; bad < 5 {
					t.Errorf("pc %#x: got %v, %v; want %v, %v", pc, gl, err2, wl, err1)
				}
			}
		}
	}
	if pcs < 1000 || bad > 0 {
		t.Errorf("%d of %d PCs differ", bad, pcs)
	}
}

func tableOf(t *testing.T, bin []byte) (*Table, error) {
	t.Helper()
	obj, err := object.NewBytes(bin)
	if err != nil {
		t.Fatal(err)
	}
	return NewTable(obj)
}

// TestGarbledSynthetic reads binaries transformed as garble's linker
// does (random magic, entry offsets XORed with name offset × key), on a
// little- and a big-endian target, 64- and 32-bit: every PC answers as in
// the original, Info says what was repaired, and the key is the one used.
func TestGarbledSynthetic(t *testing.T) {
	for _, tg := range []objtest.Target{objtest.LinuxStripped, objtest.Linux386, objtest.LinuxS390X} {
		t.Run(tg.Name, func(t *testing.T) {
			bin := objtest.Binary(t, tg)
			want := mustTable(t, bin)
			for _, c := range []struct {
				name       string
				magic, key uint32
			}{
				{"magic", 0xceaaf491, 0},
				{"magic+key", 0xceaaf491, 0x23375875},
				{"even key", 0x12345678, 0x5f7d529c},
			} {
				t.Run(c.name, func(t *testing.T) {
					got := mustTable(t, garbleELF(t, bin, c.magic, c.key))
					in := got.Info()
					if in.Magic != c.magic || in.EntryKey != c.key || in.Version != "1.20" {
						t.Errorf("Info: magic %#x, key %#x, version %s; want %#x, %#x, 1.20", in.Magic, in.EntryKey, in.Version, c.magic, c.key)
					}
					if !strings.Contains(in.Repairs, "unknown magic") || (c.key != 0) != strings.Contains(in.Repairs, "garble") {
						t.Errorf("Info.Repairs = %q", in.Repairs)
					}
					if !strings.Contains(in.FoundBy, "magic unknown") {
						t.Errorf("Info.FoundBy = %q", in.FoundBy)
					}
					checkSameAnswers(t, want, got)
				})
			}
		})
	}
}

// TestGarbledWrongKey checks that records whose entries disagree with the
// functab other than by one key are refused at open, naming why, and
// that one damaged record among correctly keyed ones fails its own
// lookups, never answering for another function.
func TestGarbledWrongKey(t *testing.T) {
	b, off, h, bo, recOf := garbledStripped(t)
	tab := b[off:]

	// Every record XORed with its own value: no key explains them.
	rnd := slices.Clone(b)
	for i := uint64(0); i < h.nfunc; i++ {
		r := rnd[off+uint64(len(tab)-len(recOf(i))):]
		bo.PutUint32(r, bo.Uint32(r)^uint32(i*0x9e3779b9+1))
	}
	if _, err := tableOf(t, rnd); !errors.Is(err, ErrCorrupted) || !strings.Contains(err.Error(), "garble") {
		t.Errorf("records XORed at random: %v; want ErrCorrupted naming garble's rule", err)
	}

	// One record off by one under the right key.
	one := slices.Clone(b)
	i := h.nfunc / 3
	r := one[off+uint64(len(tab)-len(recOf(i))):]
	bo.PutUint32(r, bo.Uint32(r)^1)
	got, err := tableOf(t, one)
	if err != nil {
		t.Fatal(err)
	}
	entry := got.entryAt(i)
	if _, err := got.ResolveFunction(entry); !errors.Is(err, ErrCorrupted) {
		t.Errorf("pc %#x in the damaged record's function: %v; want ErrCorrupted", entry, err)
	}
}

// TestHeaderWithoutTextStart reads a 1.18+ table whose header lost its
// textStart word (marked for removal), with the magic kept and with an
// unknown one: every PC answers as in the original.
func TestHeaderWithoutTextStart(t *testing.T) {
	for _, tg := range []objtest.Target{objtest.LinuxStripped, objtest.Linux386} {
		t.Run(tg.Name, func(t *testing.T) {
			bin := objtest.Binary(t, tg)
			want := mustTable(t, bin)
			b := dropTextStart(t, bin)
			got := mustTable(t, b)
			if in := got.Info(); !strings.Contains(in.Repairs, "textStart") {
				t.Errorf("Info.Repairs = %q; want the missing textStart", in.Repairs)
			}
			checkSameAnswers(t, want, got)
			got = mustTable(t, garbleELF(t, b, 0xceaaf491, 0x23375875))
			if in := got.Info(); !strings.Contains(in.Repairs, "textStart") || in.EntryKey != 0x23375875 {
				t.Errorf("Info: repairs %q, key %#x", in.Repairs, in.EntryKey)
			}
			checkSameAnswers(t, want, got)
		})
	}
}

// TestUnknownLayoutRefused checks that a header that validates neither as
// its magic's layout nor as the 1.20 layout is refused with an error that
// says what did not validate.
func TestUnknownLayoutRefused(t *testing.T) {
	bin := objtest.Binary(t, objtest.LinuxStripped)
	off, _, bo := elfPclntab(t, bin)
	// The function name table moved away from the header's end (a word
	// added to the header): neither 8 nor 7 words explain it.
	b := garbleELF(t, bin, 0xceaaf491, 0)
	tab := b[off:]
	bo.PutUint64(tab[8+3*8:], bo.Uint64(tab[8+3*8:])+8)
	_, err := tableOf(t, b)
	if !errors.Is(err, ErrNoTable) || !strings.Contains(err.Error(), "function name table starts at") {
		t.Errorf("header with an extra word: %v; want ErrNoTable saying the name table does not follow the header", err)
	}
}

// TestMovedTable reads tables whose section was renamed, merged into the
// section before it, or whose section headers are gone, each also
// garbled: found by scanning, by magic or by structure, and every PC
// answers as in the original. Info says how the table was found.
func TestMovedTable(t *testing.T) {
	bin := objtest.Binary(t, objtest.LinuxStripped)
	want := mustTable(t, bin)
	garbled := garbleELF(t, bin, 0xceaaf491, 0x23375875)
	for _, c := range []struct {
		name    string
		bin     []byte
		foundBy string
	}{
		{"renamed", renameSection(t, bin, ".gopclntab", ".rodata.xy"), "scan of section .rodata.xy"},
		{"renamed-garbled", renameSection(t, garbled, ".gopclntab", ".rodata.xy"), "scan of section .rodata.xy for a header by structure"},
		{"merged", mergeSection(t, bin), "scan of section "},
		{"merged-garbled", mergeSection(t, garbled), "by structure"},
		{"noshdr", objtest.StripSectionHeaders(t, bin), "scan of segment"},
		{"noshdr-garbled", objtest.StripSectionHeaders(t, garbled), "by structure"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := mustTable(t, c.bin)
			if in := got.Info(); !strings.Contains(in.FoundBy, c.foundBy) {
				t.Errorf("Info.FoundBy = %q; want %q", in.FoundBy, c.foundBy)
			}
			checkSameAnswers(t, want, got)
		})
	}
}

// TestMovedTableObjcopy moves the table with objcopy: the section renamed
// (--rename-section) is found by the scan. objcopy --remove-section drops
// the table's bytes with the section (the segment keeps its size, not the
// table): that gets ErrNoTable, saying that Go build info is there.
func TestMovedTableObjcopy(t *testing.T) {
	objcopy, err := exec.LookPath("objcopy")
	if err != nil {
		t.Skip("no objcopy")
	}
	bin := objtest.Binary(t, objtest.LinuxStripped)
	want := mustTable(t, bin)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.WriteFile(in, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--rename-section", ".gopclntab=.data.rel.ro"},
		{"--remove-section", ".gopclntab"},
	} {
		t.Run(args[0], func(t *testing.T) {
			out := filepath.Join(dir, strings.TrimPrefix(args[0], "--"))
			if msg, err := exec.Command(objcopy, append(args, in, out)...).CombinedOutput(); err != nil {
				t.Skipf("objcopy %v: %v\n%s", args, err, msg)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tableOf(t, b)
			if args[0] == "--remove-section" {
				if !errors.Is(err, ErrNoTable) || !strings.Contains(err.Error(), "Go build info") {
					t.Errorf("objcopy %v: %v; want ErrNoTable naming the build info found", args, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("objcopy %v: %v", args, err)
			}
			t.Logf("objcopy %v: found by %s", args, got.Info().FoundBy)
			checkSameAnswers(t, want, got)
		})
	}
}

// TestNoTableEvidence checks that an object without a readable table gets
// an error that says what was looked for and what was found: a packer's
// signature (UPX), a pclntab section whose header does not validate.
func TestNoTableEvidence(t *testing.T) {
	bin := objtest.Binary(t, objtest.LinuxStripped)
	off, size, _ := elfPclntab(t, bin)

	// The pclntab wiped and a UPX signature in the data: what a packed
	// binary looks like to the reader.
	b := slices.Clone(bin)
	clear(b[off : off+size])
	copy(b[off+64:], "UPX!")
	_, err := tableOf(t, b)
	if !errors.Is(err, ErrNoTable) {
		t.Fatalf("wiped pclntab: %v; want ErrNoTable", err)
	}
	for _, s := range []string{"looked for", "bytes of", "UPX", "section .gopclntab, whose"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

// TestWrapperFuncIDRenumbered renumbers the wrapper funcID of a Go 1.26
// binary (every record marked a wrapper gets 30, above every funcID of
// the release), as a release could without a new magic: Wrapper must
// still be right for every function, learned from runtime.deferreturn,
// and Info must say so.
func TestWrapperFuncIDRenumbered(t *testing.T) {
	bin := objtest.Binary(t, objtest.LinuxStripped)
	want := mustTable(t, bin)
	if want.layout.minor < 25 {
		t.Skipf("built by Go 1.%d; the test renumbers 1.25+'s wrapper funcID 23", want.layout.minor)
	}
	b := slices.Clone(bin)
	off, _, bo := elfPclntab(t, b)
	tab := b[off:]
	h, err := parseHeader(tab)
	if err != nil {
		t.Fatal(err)
	}
	funcs := uint64(len(tab) - len(h.funcs))
	n := 0
	for i := uint64(0); i < h.nfunc; i++ {
		rec := tab[funcs+uint64(bo.Uint32(h.functab[i*8+4:])):]
		if rec[want.layout.funcID] == 23 {
			rec[want.layout.funcID] = 30
			n++
		}
	}
	got := mustTable(t, b)
	if in := got.Info(); !strings.Contains(in.Repairs, "funcID 30") {
		t.Errorf("Info.Repairs = %q; want the funcID above the release's", in.Repairs)
	}
	wrappers := 0
	for f, err := range want.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		g, err := got.ResolveFunction(f.Entry())
		if err != nil {
			t.Fatal(err)
		}
		if f.Wrapper() {
			wrappers++
		}
		if g.Wrapper() != f.Wrapper() {
			t.Errorf("%s: Wrapper %v, want %v", f.Name(), g.Wrapper(), f.Wrapper())
		}
	}
	if wrappers == 0 || wrappers != n {
		t.Errorf("%d wrappers, %d records renumbered", wrappers, n)
	}

	// garble -tiny renames runtime.deferreturn, the function the wrapper
	// ID is learned from: the ID is then the records' largest funcID
	// (largestFuncID), and asking for it (Info, and the inline trees,
	// which LookupFunction's error for a name not found walks) must
	// answer rather than wait on itself.
	i := bytes.Index(tab, []byte("runtime.deferreturn\x00"))
	if i < 0 {
		t.Fatal("no runtime.deferreturn in the name table")
	}
	copy(tab[i:], "runtime.deferretXrn")
	renamed := mustTable(t, b)
	_ = renamed.Info()
	if id := renamed.wrapperID(); id != 30 {
		t.Errorf("deferreturn renamed: wrapper funcID %d; want 30, the records' largest", id)
	}
	for f, err := range want.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		g, err := renamed.ResolveFunction(f.Entry())
		if err != nil {
			t.Fatal(err)
		}
		if g.Wrapper() != f.Wrapper() {
			t.Errorf("deferreturn renamed: %s: Wrapper %v, want %v", f.Name(), g.Wrapper(), f.Wrapper())
		}
	}
	if _, err := renamed.LookupFunction("runtime.deferreturn"); !errors.Is(err, ErrFunctionNotFound) {
		t.Errorf("LookupFunction of the renamed deferreturn: %v", err)
	}
	if _, err := renamed.LookupFunction("main.nosuchfunction"); !errors.Is(err, ErrFunctionNotFound) {
		t.Errorf("LookupFunction of a name nothing has: %v", err)
	}
}

// TestModuledataFieldChanged adds a word to the moduledata of a Go 1.26+
// binary, or removes one, before the fields the reader takes from the
// release's layout (gofunc, textsectmap), as a release may without a new
// magic (Go 1.27 did): the table is refused, naming the moduledata, not
// read with a wrong funcdata base. The stripped build has no symbols to
// fall back on.
func TestModuledataFieldChanged(t *testing.T) {
	bin := objtest.Binary(t, objtest.LinuxStripped)
	want := mustTable(t, bin)
	if want.layout.minor < 26 {
		t.Skipf("built by Go 1.%d; the test edits 1.26+'s .go.module", want.layout.minor)
	}
	ml := moduledataLayoutFor(want.layout.minor)
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	md := f.Section(".go.module")
	for _, c := range []struct {
		name string
		at   int  // word index
		add  bool // insert a copy of the word before it, else remove it
	}{
		{"added before gofunc", ml.gofunc, true},
		{"added after gofunc", ml.gofunc + 1, true},
		{"removed before gofunc", ml.gofunc - 1, false},
		{"removed gofunc", ml.gofunc, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := slices.Clone(bin)
			words := b[md.Offset : md.Offset+md.Size]
			at := c.at * 8
			if c.add {
				copy(words[at+8:], words[at:len(words)-8])
			} else {
				copy(words[at:], words[at+8:])
			}
			tab, err := tableOf(t, b)
			if err == nil {
				// Read anyway: then it must answer as the original.
				checkSameAnswers(t, want, tab)
				return
			}
			if !errors.Is(err, ErrCorrupted) || !strings.Contains(err.Error(), "moduledata") {
				t.Errorf("%v; want ErrCorrupted naming the moduledata", err)
			}
		})
	}
}

// TestGarbledPaddedLayout reads corpus binaries of Go 1.18–1.25, whose
// pclntab's function name table starts after zero padding (at 0x60 for
// 64-bit pointers, not right after the 0x48-byte header), transformed as
// garble v0.15.0's linker does with Go 1.25 (random magic, entry offsets
// XORed with name offset × key), in their section and without section
// headers (so that only the scan finds them, by structure): every PC
// answers as in the original, and Info says what was repaired. Go 1.18
// and 1.19's tables (40-byte records) are read with their own layout,
// not Go 1.20's (recordFamily).
func TestGarbledPaddedLayout(t *testing.T) {
	entries, err := testcorpus.Entries()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		var minor int
		if _, err := fmt.Sscanf(e.Name, "go1.%d.", &minor); err != nil || minor < 18 || minor > 25 || !strings.Contains(e.Name, ".linux-") || strings.HasSuffix(e.Name, ".pie") {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			bin, err := e.Binary()
			if err != nil {
				t.Fatal(err)
			}
			want := mustTable(t, bin)
			if names := cap(want.data) - cap(want.hdr.names); names == 8+want.hdr.words*want.hdr.rd.ptrSize {
				t.Skipf("name table right after the header, at %#x", names)
			}
			n++
			garbled := garbleELF(t, bin, 0xceaaf491, 0x23375875)
			for _, c := range []struct {
				name    string
				bin     []byte
				foundBy string
			}{
				{"section", garbled, "section .gopclntab, its header checked by structure"},
				{"noshdr", objtest.StripSectionHeaders(t, garbled), "scan of segment at"},
			} {
				t.Run(c.name, func(t *testing.T) {
					got := mustTable(t, c.bin)
					in := got.Info()
					if in.Magic != 0xceaaf491 || in.EntryKey != 0x23375875 || !strings.Contains(in.Repairs, "unknown magic") {
						t.Errorf("Info: magic %#x, key %#x, repairs %q", in.Magic, in.EntryKey, in.Repairs)
					}
					if !strings.Contains(in.FoundBy, c.foundBy) || !strings.Contains(in.FoundBy, "structure") {
						t.Errorf("Info.FoundBy = %q; want %q, by structure", in.FoundBy, c.foundBy)
					}
					if v := want.Info().Version; in.Version != v || !strings.Contains(in.Repairs, "read as the Go "+v+" layout") {
						t.Errorf("Info: version %s, repairs %q; want %s, the original's layout family", in.Version, in.Repairs, v)
					}
					checkSameAnswers(t, want, got)
				})
			}
		})
	}
	if n == 0 {
		t.Skip("no Go 1.18–1.25 linux binary with a padded name table in the corpus")
	}
}

// TestUnknownMagicRecordSizes checks that a table with an unknown magic
// whose first records' sizes fit neither Go 1.20's _func layout nor Go
// 1.18's (a release that changed the record, or damage) is refused,
// saying so, rather than read with a layout that does not fit.
func TestUnknownMagicRecordSizes(t *testing.T) {
	b, _, _, bo, recOf := garbledStripped(t)
	rec := recOf(3)
	bo.PutUint32(rec[28:], bo.Uint32(rec[28:])+2) // npcdata: the record 8 bytes longer than the next one's offset allows
	_, err := tableOf(t, b)
	if !errors.Is(err, ErrCorrupted) || !strings.Contains(err.Error(), "fit neither Go 1.20's _func layout nor Go 1.18's") {
		t.Errorf("record 3's npcdata changed: %v; want ErrCorrupted saying the record sizes fit no layout", err)
	}
}

// garbledStripped returns the stripped test program garbled as garble
// v0.18.0 would (a random magic, entry offsets under a key), the offset
// of its pclntab, the table's header and byte order, and the record of a
// functab entry, a slice of the returned bytes.
func garbledStripped(t *testing.T) (b []byte, off uint64, h *header, bo binary.ByteOrder, recOf func(i uint64) []byte) {
	t.Helper()
	b = garbleELF(t, objtest.Binary(t, objtest.LinuxStripped), 0xceaaf491, 0x23375875)
	off, _, bo = elfPclntab(t, b)
	tab := b[off:]
	h, err := parseHeader(tab)
	if err != nil {
		t.Fatal(err)
	}
	funcs := uint64(len(tab) - len(h.funcs))
	recOf = func(i uint64) []byte { return tab[funcs+uint64(bo.Uint32(h.functab[i*8+4:])):] }
	return b, off, h, bo, recOf
}
