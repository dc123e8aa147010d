package objfile

import (
	"math"
	"slices"
	"strings"
)

// shortName is how far Name looks for the end of a name directly, before it
// turns to its index of the table's NULs. Go names longer than this are
// rare (long generic instantiations), so most tables never need the index.
const shortName = 512

// StringTable reads the NUL-terminated names that the entries of a symbol
// (or section) table give by offset: ELF's .strtab and .shstrtab, the
// string tables of Mach-O, COFF and XCOFF.
//
// A damaged table can make its names overlap without limit: one without
// NULs makes every name run to its end. So that reading n names costs
// neither n copies of the table nor n scans of it, the names are
// substrings of one copy of the table, made on the first call of Name, and
// the end of a name longer than shortName is found in an index of the
// table's NULs, made once. Reading any number of names thus allocates at
// most five times the table's size, and each name costs O(log n) time
// beyond its first shortName bytes.
//
// A StringTable is not safe for concurrent use: each walk of a symbol table
// makes its own.
type StringTable struct {
	data    []byte   // the table as stored in the file
	s       string   // a copy of data, made on first use
	copied  bool     // whether s is made
	nuls    []uint32 // the offsets of the NULs in s, ascending, made when first needed
	indexed bool     // whether nuls is made
}

// NewStringTable returns the string table stored in data, which it reads
// only when a name is asked for, and which must not change meanwhile.
func NewStringTable(data []byte) StringTable {
	return StringTable{data: data}
}

// Name returns the name at offset off: the bytes from off up to the next
// NUL. ok is false if off is outside the table or no NUL follows it.
func (t *StringTable) Name(off uint64) (name string, ok bool) {
	if off >= uint64(len(t.data)) {
		return "", false
	}
	if !t.copied {
		t.s, t.copied = string(t.data), true
	}
	s := t.s[off:]
	if n := strings.IndexByte(s[:min(len(s), shortName)], 0); n >= 0 {
		return s[:n], true
	}
	if len(s) <= shortName {
		return "", false
	}
	if uint64(len(t.s)) > math.MaxUint32 {
		// No index holds offsets this large; such a table is read only
		// from files of more than 4 GiB.
		n := strings.IndexByte(s, 0)
		return s[:max(n, 0)], n >= 0
	}
	if !t.indexed {
		t.nuls = make([]uint32, 0, strings.Count(t.s, "\x00"))
		for i := 0; ; {
			n := strings.IndexByte(t.s[i:], 0)
			if n < 0 {
				break
			}
			t.nuls = append(t.nuls, uint32(i+n))
			i += n + 1
		}
		t.indexed = true
	}
	i, _ := slices.BinarySearch(t.nuls, uint32(off))
	if i == len(t.nuls) {
		return "", false
	}
	return t.s[off:t.nuls[i]], true
}

// Has reports whether the name at offset off is name, comparing it where it
// is stored: it neither copies nor scans the table.
func (t *StringTable) Has(off uint64, name string) bool {
	return t.HasPrefixed(off, "", name)
}

// HasPrefixed reports whether the name at offset off is prefix followed by
// name, as Has does.
func (t *StringTable) HasPrefixed(off uint64, prefix, name string) bool {
	n := uint64(len(prefix)) + uint64(len(name))
	if off >= uint64(len(t.data)) || n >= uint64(len(t.data))-off {
		return false
	}
	b := t.data[off:]
	return b[n] == 0 && string(b[:len(prefix)]) == prefix && string(b[len(prefix):n]) == name
}
