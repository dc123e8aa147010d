package elffile

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"slices"
	"testing"
)

// hashSym is a symbol of a synthetic .dynsym.
type hashSym struct {
	name  string
	value uint64
	undef bool
}

// hashELF is a synthetic 64-bit little-endian ELF file holding only a
// .dynsym, its .dynstr and a GNU hash table of it, with the offsets of
// the hash table's parts, for tests to damage.
type hashELF struct {
	data                 []byte
	hashOff              int // the .gnu.hash section
	bucketsOff, chainOff int
	symsOff              int // the .dynsym section
	symOffset            int
	index                map[string]int // the index of the first symbol of each name
	hashSizeAt           int            // where the .gnu.hash section's size is
}

// buildHashELF lays out syms as a linker does: the first unhashed of them
// (undefined ones, typically) first, then the others grouped by bucket,
// each group in the order given.
func buildHashELF(t testing.TB, unhashed, hashed []hashSym, nbuckets uint32) *hashELF {
	t.Helper()
	le := binary.LittleEndian
	symOffset := 1 + len(unhashed)
	byBucket := slices.Clone(hashed)
	slices.SortStableFunc(byBucket, func(a, b hashSym) int {
		return int(gnuHashOf(a.name)%nbuckets) - int(gnuHashOf(b.name)%nbuckets)
	})
	all := append([]hashSym{{}}, unhashed...)
	all = append(all, byBucket...)

	e := &hashELF{symOffset: symOffset, index: map[string]int{}}
	strtab := []byte{0}
	syms := make([]byte, 0, len(all)*sym64Size)
	for i, s := range all {
		var ent [sym64Size]byte
		if i > 0 {
			le.PutUint32(ent[0:], uint32(len(strtab)))
			strtab = append(append(strtab, s.name...), 0)
			ent[4] = byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_FUNC)
			if !s.undef {
				le.PutUint16(ent[6:], 1)
			}
			le.PutUint64(ent[8:], s.value)
			if _, ok := e.index[s.name]; !ok && !s.undef {
				e.index[s.name] = i
			}
		}
		syms = append(syms, ent[:]...)
	}

	// The hash table: header, one Bloom word (all ones), buckets, chain.
	hash := make([]byte, 16+8+4*int(nbuckets)+4*(len(all)-symOffset))
	le.PutUint32(hash[0:], nbuckets)
	le.PutUint32(hash[4:], uint32(symOffset))
	le.PutUint32(hash[8:], 1)
	le.PutUint32(hash[12:], 6)
	le.PutUint64(hash[16:], ^uint64(0))
	buckets, chain := 24, 24+4*int(nbuckets)
	for i := symOffset; i < len(all); i++ {
		h := gnuHashOf(all[i].name)
		b := h % nbuckets
		if le.Uint32(hash[buckets+4*int(b):]) == 0 {
			le.PutUint32(hash[buckets+4*int(b):], uint32(i))
		}
		c := h &^ 1
		if i+1 == len(all) || gnuHashOf(all[i+1].name)%nbuckets != b {
			c |= 1
		}
		le.PutUint32(hash[chain+4*(i-symOffset):], c)
	}

	shstrtab := []byte("\x00.dynsym\x00.dynstr\x00.gnu.hash\x00.shstrtab\x00")
	out := make([]byte, ehdr64Size)
	place := func(b []byte) int {
		for len(out)%8 != 0 {
			out = append(out, 0)
		}
		off := len(out)
		out = append(out, b...)
		return off
	}
	symsOff, strOff, hashOff, shstrOff := place(syms), place(strtab), place(hash), place(shstrtab)
	shdr := func(name, typ, link uint32, off, size, entsize int) []byte {
		var h [shdr64Size]byte
		le.PutUint32(h[0:], name)
		le.PutUint32(h[4:], typ)
		if typ != uint32(elf.SHT_NULL) && name != 27 {
			le.PutUint64(h[8:], uint64(elf.SHF_ALLOC))
			le.PutUint64(h[16:], uint64(0x400000+off))
		}
		le.PutUint64(h[24:], uint64(off))
		le.PutUint64(h[32:], uint64(size))
		le.PutUint32(h[40:], link)
		le.PutUint64(h[48:], 8)
		le.PutUint64(h[56:], uint64(entsize))
		return h[:]
	}
	var shdrs []byte
	shdrs = append(shdrs, shdr(0, uint32(elf.SHT_NULL), 0, 0, 0, 0)...)
	shdrs = append(shdrs, shdr(1, uint32(elf.SHT_DYNSYM), 2, symsOff, len(syms), sym64Size)...)
	shdrs = append(shdrs, shdr(9, uint32(elf.SHT_STRTAB), 0, strOff, len(strtab), 0)...)
	shdrs = append(shdrs, shdr(17, uint32(elf.SHT_GNU_HASH), 1, hashOff, len(hash), 0)...)
	shdrs = append(shdrs, shdr(27, uint32(elf.SHT_STRTAB), 0, shstrOff, len(shstrtab), 0)...)
	shoff := place(shdrs)
	e.hashSizeAt = shoff + 3*shdr64Size + 32

	copy(out, elf.ELFMAG)
	out[elf.EI_CLASS], out[elf.EI_DATA], out[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(out[16:], uint16(elf.ET_EXEC))
	le.PutUint16(out[18:], uint16(elf.EM_X86_64))
	le.PutUint32(out[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(out[40:], uint64(shoff))
	le.PutUint16(out[52:], ehdr64Size)
	le.PutUint16(out[54:], phdr64Size)
	le.PutUint16(out[58:], shdr64Size)
	le.PutUint16(out[60:], 5)
	le.PutUint16(out[62:], 4)
	e.data = out
	e.hashOff, e.bucketsOff, e.chainOff, e.symsOff = hashOff, hashOff+buckets, hashOff+chain, symsOff
	return e
}

// hashSyms returns n defined symbols sym0, sym1, ..., with one name twice
// (dup, the first at value 1, the second at value 2), and three undefined
// symbols and one defined one (early) that the hash table leaves out.
func hashSyms(n int) (unhashed, hashed []hashSym) {
	unhashed = []hashSym{{name: "imp0", undef: true}, {name: "early", value: 7}, {name: "imp1", undef: true}, {name: "imp2", undef: true}}
	for i := range n {
		hashed = append(hashed, hashSym{name: fmt.Sprintf("sym%d", i), value: uint64(0x1000 + 16*i)})
	}
	hashed = append(hashed, hashSym{name: "dup", value: 1}, hashSym{name: "dup", value: 2})
	return unhashed, hashed
}

// walkSymbols returns the first symbol of each name, as a walk of the
// whole table finds them (Symbols).
func walkSymbols(t *testing.T, f *File) map[string]uint64 {
	t.Helper()
	first := map[string]uint64{}
	for s, err := range f.Symbols() {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := first[s.Name]; !ok {
			first[s.Name] = s.Addr
		}
	}
	return first
}

// TestHashLookup checks that LookupSymbol, which reads the GNU hash table
// of a large .dynsym, finds exactly what a walk of the table finds: every
// symbol, the first of a duplicated name, the symbols the hash table
// leaves out, no undefined one; and that it allocates nothing.
func TestHashLookup(t *testing.T) {
	unhashed, hashed := hashSyms(3000)
	e := buildHashELF(t, unhashed, hashed, 257)
	f, err := NewBytes(e.data)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.hashTable(&f.dynsym); !ok {
		t.Fatal("the hash table is not used")
	}
	want := walkSymbols(t, f)
	if len(want) != 3000+2 {
		t.Fatalf("the walk finds %d names, want %d", len(want), 3000+2)
	}
	for name, addr := range want {
		s, ok, err := f.LookupSymbol(name)
		if !ok || err != nil || s.Addr != addr || s.Name != name {
			t.Errorf("LookupSymbol(%q) = %+v, %v, %v; want address %#x", name, s, ok, err, addr)
		}
	}
	for _, name := range []string{"imp0", "imp2", "sym", "sym30000", "no such symbol", "dup\x00"} {
		if s, ok, err := f.LookupSymbol(name); ok || err != nil {
			t.Errorf("LookupSymbol(%q) = %+v, %v, %v; want nothing", name, s, ok, err)
		}
	}
	if got := want["dup"]; got != 1 {
		t.Errorf("dup at %#x, want the first, at 1", got)
	}
	if n := testing.AllocsPerRun(100, func() { f.LookupSymbol("sym1234") }); n != 0 {
		t.Errorf("LookupSymbol allocates %v times, want 0", n)
	}
	// No map is made: lookups keep reading the hash table.
	for range 20 {
		f.LookupSymbol("sym7")
	}
	if f.syms.Mapped() {
		t.Error("after 20 lookups, a map of the symbols is made")
	}
}

// TestHashLookupTrustsHashTable checks that in a large .dynsym the hash
// table decides, as for the dynamic linker: a symbol whose chain word
// does not match its name's hash is not found, though a walk yields it;
// in a small one, the walk decides.
func TestHashLookupTrustsHashTable(t *testing.T) {
	le := binary.LittleEndian
	for _, n := range []int{3000, 100} {
		unhashed, hashed := hashSyms(n)
		e := buildHashELF(t, unhashed, hashed, 31)
		i := e.index["sym42"]
		at := e.chainOff + 4*(i-e.symOffset)
		le.PutUint32(e.data[at:], le.Uint32(e.data[at:])^0x100)
		f, err := NewBytes(e.data)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := walkSymbols(t, f)["sym42"]; !ok {
			t.Fatal("the walk does not find sym42")
		}
		_, ok, err := f.LookupSymbol("sym42")
		if err != nil || ok != (n < hashMinSymbols) {
			t.Errorf("%d symbols: LookupSymbol(sym42) found %v, %v; want %v", n+6, ok, err, n < hashMinSymbols)
		}
	}
}

// TestHashLookupDamaged checks that a damaged hash table is either read
// safely or not used: a table too short for its counts, or with no
// buckets, or a symbol offset beyond the table, leaves LookupSymbol to
// walk (finding every symbol); buckets and chains that point anywhere end
// the search without a panic, within the table.
func TestHashLookupDamaged(t *testing.T) {
	le := binary.LittleEndian
	unhashed, hashed := hashSyms(2000)
	base := buildHashELF(t, unhashed, hashed, 127)
	walked := []struct {
		name  string
		patch func(e *hashELF)
	}{
		{"no buckets", func(e *hashELF) { le.PutUint32(e.data[e.hashOff:], 0) }},
		{"symbol offset 0", func(e *hashELF) { le.PutUint32(e.data[e.hashOff+4:], 0) }},
		{"symbol offset beyond", func(e *hashELF) { le.PutUint32(e.data[e.hashOff+4:], 1<<20) }},
		{"huge Bloom filter", func(e *hashELF) { le.PutUint32(e.data[e.hashOff+8:], 1<<31) }},
		{"huge bucket count", func(e *hashELF) { le.PutUint32(e.data[e.hashOff:], 1<<32-1) }},
		{"section cut short", func(e *hashELF) { le.PutUint64(e.data[e.hashSizeAt:], 100) }},
	}
	for _, c := range walked {
		e := *base
		e.data = slices.Clone(base.data)
		c.patch(&e)
		f, err := NewBytes(e.data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, ok := f.hashTable(&f.dynsym); ok {
			t.Errorf("%s: the hash table is used", c.name)
		}
		for _, name := range []string{"sym0", "sym1999", "early", "dup"} {
			if _, ok, err := f.LookupSymbol(name); !ok || err != nil {
				t.Errorf("%s: LookupSymbol(%q): %v, %v", c.name, name, ok, err)
			}
		}
	}
	// Buckets that point past the table or before the hashed symbols, a
	// chain that never ends, chain words all matching: each search stays
	// within the table.
	read := []struct {
		name  string
		patch func(e *hashELF)
	}{
		{"buckets past the end", func(e *hashELF) {
			for b := 0; b < 127; b++ {
				le.PutUint32(e.data[e.bucketsOff+4*b:], 1<<31+uint32(b))
			}
		}},
		{"buckets before the hashed symbols", func(e *hashELF) {
			for b := 0; b < 127; b++ {
				le.PutUint32(e.data[e.bucketsOff+4*b:], 2)
			}
		}},
		{"chains never end", func(e *hashELF) {
			for i := e.symOffset; i < 2007; i++ {
				at := e.chainOff + 4*(i-e.symOffset)
				le.PutUint32(e.data[at:], le.Uint32(e.data[at:])&^1)
			}
		}},
		{"every chain word matches", func(e *hashELF) {
			for i := e.symOffset; i < 2007; i++ {
				le.PutUint32(e.data[e.chainOff+4*(i-e.symOffset):], gnuHashOf("sym5")&^1)
			}
			for b := 0; b < 127; b++ {
				le.PutUint32(e.data[e.bucketsOff+4*b:], uint32(e.symOffset))
			}
		}},
	}
	for _, c := range read {
		e := *base
		e.data = slices.Clone(base.data)
		c.patch(&e)
		f, err := NewBytes(e.data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, name := range []string{"sym0", "sym5", "sym1999", "early", "dup", "none"} {
			s, ok, err := f.LookupSymbol(name)
			if err != nil || ok && s.Name != name {
				t.Errorf("%s: LookupSymbol(%q) = %+v, %v, %v", c.name, name, s, ok, err)
			}
			if name == "early" && !ok {
				t.Errorf("%s: LookupSymbol(early) finds nothing; the walk of the unhashed symbols must", c.name)
			}
		}
		if c.name == "every chain word matches" {
			if s, ok, _ := f.LookupSymbol("sym5"); !ok || s.Addr != 0x1000+16*5 {
				t.Errorf("%s: LookupSymbol(sym5) = %+v, %v", c.name, s, ok)
			}
		}
	}
}

// FuzzHashLookup damages a synthetic file whose .dynsym (2,006 entries)
// LookupSymbol searches through its GNU hash table, and checks that every
// lookup returns without a panic either nothing or a symbol of the name
// that a walk of the table yields too.
func FuzzHashLookup(f *testing.F) {
	unhashed, hashed := hashSyms(2000)
	base := buildHashELF(f, unhashed, hashed, 127)
	fuzzseed.Add(f, uint32(base.hashOff), []byte{0}, "sym5")
	fuzzseed.Add(f, uint32(base.hashOff+4), []byte{0xff, 0xff}, "early")
	fuzzseed.Add(f, uint32(base.bucketsOff+40), []byte{0xff, 0xff, 0xff, 0x7f}, "dup")
	fuzzseed.Add(f, uint32(base.chainOff+400), []byte{1, 2, 3, 4, 5, 6, 7, 8}, "sym100")
	fuzzseed.Add(f, uint32(base.symsOff+24*100), []byte{0xff, 0xff, 0xff, 0xff}, "sym1999")
	f.Fuzz(func(t *testing.T, off uint32, patch []byte, name string) {
		data := slices.Clone(base.data)
		if len(patch) > 0 {
			copy(data[int(off)%len(data):], patch)
		}
		file, err := NewBytes(data)
		if err != nil {
			return
		}
		yields := map[string][]uint64{}
		for s, err := range file.Symbols() {
			if err != nil {
				break
			}
			yields[s.Name] = append(yields[s.Name], s.Addr)
		}
		for _, n := range []string{name, "sym5", "sym1999", "early", "dup"} {
			s, ok, err := file.LookupSymbol(n)
			if err != nil && ok {
				t.Fatalf("LookupSymbol(%q) = %+v, %v, %v", n, s, ok, err)
			}
			if ok && (s.Name != n || !slices.Contains(yields[n], s.Addr)) {
				t.Fatalf("LookupSymbol(%q) = %+v; the walk yields %v", n, s, yields[n])
			}
		}
	})
}
