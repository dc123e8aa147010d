package gosym

import (
	"strconv"
	"strings"
	"sync"

	"github.com/gosym-dev/gosym/internal/addrspace"
	"github.com/gosym-dev/gosym/internal/buildinfo"
	"github.com/gosym-dev/gosym/object"
)

// The release that wrote a table fixes its record layout within a magic's
// family. It comes from the build info (Go 1.13+), from the symbol
// runtime.buildVersion, or from the version string found in the data; when
// none of those is there it is guessed from the records themselves.

// parseMinor returns N of a version string "go1.N...", or 0.
func parseMinor(v string) int {
	i := strings.Index(v, "go1.")
	if i < 0 {
		return 0
	}
	s := v[i+4:]
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	m, err := strconv.Atoi(s[:n])
	if err != nil {
		return 0
	}
	return m
}

// symbolVersion reads runtime.buildVersion, a Go string, when the object
// has symbols: the only record of the release before Go 1.13.
func symbolVersion(obj object.Object, mem *addrspace.Space) string {
	sl, ok := obj.(object.SymbolLookup)
	if !ok {
		return ""
	}
	sym, err := sl.LookupSymbol("runtime.buildVersion")
	if err != nil {
		return ""
	}
	// The string header is two pointers; try both pointer sizes, keeping
	// the one that yields a version-looking string.
	for _, p := range []uint64{8, 4} {
		hdr := mem.Slice(sym.Addr, 2*p)
		if hdr == nil {
			continue
		}
		for _, rd := range []reader{{false, int(p)}, {true, int(p)}} {
			v := buildinfo.String(mem, rd.ptr(hdr), rd.ptr(hdr[p:]), 1024)
			if parseMinor(v) > 0 {
				return v
			}
		}
	}
	return ""
}

// guessMinor picks a Go minor version for a table whose release is not
// recorded: the oldest of the magic's range, except that Go 1.2–1.11 and
// 1.12–1.15 records (one magic, two layouts) are told apart by statistics
// over a few records (FORMAT.md, "Unknown release").
func (t *Table) guessMinor() int {
	lo, _ := minorRange(t.hdr.magic)
	if t.hdr.magic != magic12 {
		return lo
	}
	// Little-endian family A stores nfuncdata as an int32 at P+28, so byte
	// P+28 is usually non-zero and P+31 zero; family B keeps funcID (mostly
	// zero) at P+28 and nfuncdata at P+31.
	p := t.hdr.rd.ptrSize
	votesA, votesB := 0, 0
	n := t.hdr.nfunc
	for k := uint64(0); k < min(n, 64); k++ {
		i := k * n / min(n, 64)
		off, ok := t.funcOffAt(i)
		if !ok || off > uint64(len(t.hdr.funcs)) || uint64(len(t.hdr.funcs))-off < uint64(p+32) {
			continue
		}
		rec := t.hdr.funcs[off:]
		a, b := rec[p+28], rec[p+31]
		if t.hdr.rd.bigEndian {
			// Both families keep nfuncdata's value in byte P+31, and
			// bytes P+29 and P+30 are zero in both. Byte P+28 is the
			// top byte of family A's nfuncdata, always zero, and family
			// B's funcID, non-zero for runtime functions and wrappers;
			// 1.7–1.9 linkers put 0x1234567 in family A's word at P+8.
			if a != 0 {
				votesB++
			} else if t.hdr.rd.u32(rec[p+8:]) == 0x1234567 {
				votesA++
			}
			continue
		}
		switch {
		case a != 0 && b == 0:
			votesA++
		case a == 0 && b != 0:
			votesB++
		}
	}
	if votesB > votesA {
		return 12
	}
	return 11
}

// wrapperCache holds the wrapper funcID of a table whose release is
// unknown, learned from runtime.deferreturn, which every release since 1.14
// marks as a wrapper (FORMAT.md, "Wrappers").
type wrapperCache struct {
	known bool // the release, hence layout.wrapperID, is known
	once  sync.Once
	id    int
}

// wrapperID returns the funcID of compiler-generated wrappers, -1 if the
// release marks none.
//
// For a known release it is the release's, unless the records sampled by
// checkFuncIDs (on first use, not at open: it reads 64 records) hold a
// larger funcID: then, as for an unknown release, it is learned.
func (t *Table) wrapperID() uint32 {
	if t.hdr.magic == magic12 {
		return uint32(t.layout.wrapperID)
	}
	t.wrapper.once.Do(func() {
		t.wrapper.id = t.layout.wrapperID
		if t.wrapper.known {
			t.checkFuncIDs()
			if t.hdr.funcIDBeyond == 0 {
				return
			}
		}
		// Not LookupFunction: its error for a name not found (a -tiny
		// garbled binary renames deferreturn) walks the inline trees,
		// which ask for the wrapper ID.
		if f, ok, _ := t.findFunction("runtime.deferreturn"); ok {
			t.wrapper.id = int(f.funcID())
		} else if id, ok := t.largestFuncID(); ok {
			t.wrapper.id = id
		}
	})
	return uint32(t.wrapper.id)
}

// largestFuncID returns the largest funcID of the table's records: the
// wrapper funcID (internal/abi.FuncIDWrapper is the list's last, and every
// binary since Go 1.14 has wrappers, runtime.deferreturn among them), for
// a table of an unknown release whose runtime.deferreturn has no name to
// find it by (garble -tiny names it "" or "runtime.?"; the moduledata's
// layout bounds the release only to a range whose wrapper funcIDs differ:
// 21, 22 and 23 in Go 1.20–1.25). It reads one byte of every record,
// once, on the first question about wrappers; false if no record says.
func (t *Table) largestFuncID() (int, bool) {
	l := &t.layout
	if l.funcIDSize != 1 || l.funcID < 0 {
		return 0, false
	}
	funcs := t.hdr.funcs
	largest := 0
	for i := uint64(0); i < t.hdr.nfunc; i++ {
		off, ok := t.funcOffAt(i)
		if !ok || off >= uint64(len(funcs)) || uint64(len(funcs))-off < uint64(l.fixedSize) {
			continue
		}
		largest = max(largest, int(funcs[off+uint64(l.funcID)]))
	}
	return largest, largest > 0
}
