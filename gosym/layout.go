package gosym

// layout says where the version-dependent fields of a _func record and of
// an inline tree live (FORMAT.md, "_func records" and "Inline records"). One magic covers several layouts, so a
// layout is chosen by the Go minor version.
type layout struct {
	minor int // Go 1.minor that wrote the table

	// _func record: byte offsets of each field; -1 where absent.
	entryIsPtr    bool // entry is an absolute pointer (≤1.17), else a u32 text offset
	fixedSize     int
	nameOff       int
	args          int // the arguments size
	pcsp          int
	pcfile        int
	pcln          int
	npcdata       int
	cuOffset      int // 1.16+
	startLine     int // 1.20+
	funcID        int
	funcIDSize    int // 0 (none), 1 or 4 bytes
	flags         int // the flag byte (internal/abi.FuncFlag), 1.17+
	nfuncdata     int
	nfuncdataSize int  // 1 or 4 bytes
	funcdataIsPtr bool // funcdata are absolute, P-aligned pointers (≤1.17)

	// Inline trees (1.9+).
	pcdataInlIndex  int // PCDATA_InlTreeIndex, -1 before 1.9
	funcdataInlTree int // FUNCDATA_InlTree, -1 before 1.9
	inlRecordSize   int
	inlKind         inlKind
	wrapperID       int // funcID of compiler-generated wrappers; -1 if the release has none
}

// inlKind identifies the inline record format and how outer frames are found.
type inlKind int

const (
	inlNone inlKind = iota
	inl19           // 1.9–1.11: {parent, file, line, func}; outer frames from the record
	inl112          // 1.12–1.19: {parent, funcID, file, line, func, parentPc}
	inl120          // 1.20+: {funcID, nameOff, parentPc, startLine}
)

// layoutFor returns the layout of a table with magic m written by Go
// 1.minor, for a target with pointer size p.
func layoutFor(m magic, minor, p int) layout {
	l := layout{minor: minor, cuOffset: -1, startLine: -1, funcID: -1, flags: -1,
		pcdataInlIndex: -1, funcdataInlTree: -1, wrapperID: -1}
	switch {
	case m == magic12 && minor <= 11: // family A
		l.entryIsPtr, l.funcdataIsPtr = true, true
		l.fixedSize = p + 32
		l.nameOff, l.pcsp, l.pcfile, l.pcln, l.npcdata = p, p+12, p+16, p+20, p+24
		l.nfuncdata, l.nfuncdataSize = p+28, 4
		if minor >= 10 {
			l.funcID, l.funcIDSize = p+8, 4
		}
	case m == magic12: // family B, 1.12–1.15
		l.entryIsPtr, l.funcdataIsPtr = true, true
		l.fixedSize = p + 32
		l.nameOff, l.pcsp, l.pcfile, l.pcln, l.npcdata = p, p+12, p+16, p+20, p+24
		l.funcID, l.funcIDSize = p+28, 1
		l.nfuncdata, l.nfuncdataSize = p+31, 1
	case m == magic116:
		l.entryIsPtr, l.funcdataIsPtr = true, true
		l.fixedSize = p + 36
		l.nameOff, l.pcsp, l.pcfile, l.pcln, l.npcdata = p, p+12, p+16, p+20, p+24
		l.cuOffset = p + 28
		l.funcID, l.funcIDSize = p+32, 1
		l.nfuncdata, l.nfuncdataSize = p+35, 1
	case m == magic118:
		l.fixedSize = 40
		l.nameOff, l.pcsp, l.pcfile, l.pcln, l.npcdata = 4, 16, 20, 24, 28
		l.cuOffset = 32
		l.funcID, l.funcIDSize = 36, 1
		l.nfuncdata, l.nfuncdataSize = 39, 1
	default: // magic120
		l.fixedSize = 44
		l.nameOff, l.pcsp, l.pcfile, l.pcln, l.npcdata = 4, 16, 20, 24, 28
		l.cuOffset = 32
		l.startLine = 36
		l.funcID, l.funcIDSize = 40, 1
		l.nfuncdata, l.nfuncdataSize = 43, 1
	}
	// The arguments size follows the name: after the entry pointer
	// (≤1.17) or the entry's u32 offset (1.18+).
	l.args = l.nameOff + 4
	if l.funcIDSize == 1 && minor >= 17 {
		// From 1.17 the byte after a one-byte funcID holds the flags
		// (before, it is padding).
		l.flags = l.funcID + 1
	}

	switch {
	case minor >= 9 && minor <= 11:
		l.pcdataInlIndex, l.funcdataInlTree = 1, 2
		l.inlKind, l.inlRecordSize = inl19, 16
	case minor == 12:
		l.pcdataInlIndex, l.funcdataInlTree = 1, 2
		l.inlKind, l.inlRecordSize = inl112, 20
	case minor >= 13 && minor <= 15:
		l.pcdataInlIndex, l.funcdataInlTree = 2, 4
		l.inlKind, l.inlRecordSize = inl112, 20
	case minor >= 16 && minor <= 19:
		l.pcdataInlIndex, l.funcdataInlTree = 2, 3
		l.inlKind, l.inlRecordSize = inl112, 20
	case minor >= 20:
		l.pcdataInlIndex, l.funcdataInlTree = 2, 3
		l.inlKind, l.inlRecordSize = inl120, 16
	}

	// funcID of wrappers (FORMAT.md, "Wrappers").
	switch {
	case minor >= 25:
		l.wrapperID = 23
	case minor >= 22:
		l.wrapperID = 22
	case minor >= 18:
		l.wrapperID = 21
	case minor >= 14:
		l.wrapperID = 22
	case minor >= 12:
		l.wrapperID = 20
	}
	return l
}

// minorRange returns the Go minor versions that can write magic m.
func minorRange(m magic) (lo, hi int) {
	switch m {
	case magic12:
		return 2, 15
	case magic116:
		return 16, 17
	case magic118:
		return 18, 19
	}
	return 20, 1 << 30
}
