package gosym

import (
	"fmt"
	"math"
)

// A _func record (FORMAT.md, "_func records") holds a function's name, its pc-value tables,
// and references to its funcdata. Function is a validated record.

// Function is a physical function of a Table; a small value, cheap to copy.
// Its getters never fail: the record they read was validated when the
// Function was made. The zero Function is not valid.
type Function struct {
	t     *Table
	entry uint64
	off   uint32 // offset of the record in the table's funcs
	idx   uint32 // functab index
}

// funcAt returns the function of functab entry i (i < nfunc). ok is false
// (with a nil error) for a functab hole. This is the one way from an
// entry to a Function: the entry's record is checked the first time, and
// remembered as good (see validFuncs), since the table cannot change.
func (t *Table) funcAt(i uint64) (f Function, ok bool, err error) {
	if t.valid.has(i) {
		if !t.layout.entryIsPtr {
			// 1.18+: the entry's text offset and record offset, together.
			e := t.hdr.functab[i*8 : i*8+8]
			return Function{t: t, entry: t.textAddr(t.hdr.rd.u32(e)), off: t.hdr.rd.u32(e[4:]), idx: uint32(i)}, true, nil
		}
		off, _ := t.funcOffAt(i)
		return Function{t: t, entry: t.entryAt(i), off: uint32(off), idx: uint32(i)}, true, nil
	}
	f, ok, err = t.checkRecord(i)
	if ok && err == nil {
		t.valid.add(i, t.hdr.nfunc)
	}
	return f, ok, err
}

// checkRecord reads functab entry i and checks that its record lies in
// the table, agrees with the entry, and names a function, and that the
// function does not end before its entry.
func (t *Table) checkRecord(i uint64) (f Function, ok bool, err error) {
	off, ok := t.funcOffAt(i)
	if !ok {
		return Function{}, false, nil
	}
	l := &t.layout
	funcs := t.hdr.funcs
	bad := func(msg string) (Function, bool, error) {
		return Function{}, false, &FormatError{Off: t.funcsOffset(off), Msg: fmt.Sprintf("function %d: %s", i, msg)}
	}
	if off > uint64(len(funcs)) || uint64(len(funcs))-off < uint64(l.fixedSize) || off > math.MaxUint32 {
		return Function{}, false, &FormatError{Off: -1, Msg: fmt.Sprintf("function %d: record offset %#x out of range", i, off)}
	}
	rec := funcs[off:]
	rd := t.hdr.rd
	entry := t.entryAt(i)
	if end := t.entryAt(i + 1); end < entry {
		return bad(fmt.Sprintf("entry %#x after the next function's, %#x", entry, end))
	}
	if l.entryIsPtr {
		if rd.ptr(rec) != entry {
			return bad(fmt.Sprintf("record entry %#x, functab entry %#x", rd.ptr(rec), entry))
		}
	} else if e, key := t.hdr.functab[i*8:], rd.u32(rec[l.nameOff:])*t.hdr.entryKey; rd.u32(rec)^key != rd.u32(e) {
		// key is 0 but for garble's tables (validate.go).
		return bad(fmt.Sprintf("record entry offset %#x, functab %#x", rd.u32(rec)^key, rd.u32(e)))
	}
	size := uint64(l.fixedSize) + 4*uint64(rd.u32(rec[l.npcdata:]))
	nfd := uint64(t.nfuncdata(rec))
	if l.funcdataIsPtr {
		if nfd > 0 && (t.addr+uint64(len(t.data)-len(funcs))+off+size)%uint64(rd.ptrSize) != 0 {
			size += 4
		}
		size += nfd * uint64(rd.ptrSize)
	} else {
		size += 4 * nfd
	}
	if size > uint64(len(rec)) {
		return bad("record truncated")
	}
	nameOff := uint64(rd.u32(rec[l.nameOff:]))
	if nameOff >= uint64(len(t.hdr.names)) {
		return bad("name offset out of range")
	}
	if _, ok := stringLen(t.hdr.names, nameOff); !ok {
		return bad("name has no NUL within 64 KiB")
	}
	return Function{t: t, entry: entry, off: uint32(off), idx: uint32(i)}, true, nil
}

// funcsOffset turns an offset into the table's funcs into an offset in
// the pclntab, for errors.
func (t *Table) funcsOffset(off uint64) int64 {
	return int64(uint64(len(t.data)-len(t.hdr.funcs)) + off)
}

func (t *Table) nfuncdata(rec []byte) uint32 {
	if t.layout.nfuncdataSize == 4 {
		return t.hdr.rd.u32(rec[t.layout.nfuncdata:])
	}
	return uint32(rec[t.layout.nfuncdata])
}

// rec returns the function's record.
func (f Function) rec() []byte { return f.t.hdr.funcs[f.off:] }

// field reads the u32 field at byte offset o of the record.
func (f Function) field(o int) uint32 { return f.t.hdr.rd.u32(f.rec()[o:]) }

// Name returns the function's symbol name as stored in the binary, such as
// "main.(*T).M" or "pkg.F[go.shape.int]".
func (f Function) Name() string {
	if f.t == nil {
		return ""
	}
	return f.t.names.at(uint64(f.field(f.t.layout.nameOff)))
}

// Entry returns the function's first PC.
func (f Function) Entry() uint64 { return f.entry }

// End returns one past the function's last PC: the next function's entry,
// so alignment padding after a function belongs to it.
func (f Function) End() uint64 {
	if f.t == nil {
		return 0
	}
	return f.t.entryAt(uint64(f.idx) + 1)
}

// StartLine returns the line of the function's func keyword, or 0 when the
// binary does not record it (Go 1.19 and older).
func (f Function) StartLine() uint32 {
	if f.t == nil || f.t.layout.startLine < 0 {
		return 0
	}
	return uint32(max(int32(f.field(f.t.layout.startLine)), 0))
}

// File returns the source file at the function's entry PC, as
// runtime.FuncForPC(entry).FileLine(entry) reports it.
func (f Function) File() string {
	if f.t == nil {
		return ""
	}
	file, _ := f.fileLine(f.entry)
	return file
}

// Wrapper reports whether the function is a compiler-generated wrapper,
// which runtime tracebacks hide. Releases before Go 1.12 do not mark
// wrappers; for them a function whose code is attributed to the file
// "<autogenerated>" counts as one, the rule the 1.12–1.15 linkers applied.
func (f Function) Wrapper() bool {
	if f.t == nil {
		return false
	}
	if f.t.layout.wrapperID < 0 {
		return f.File() == "<autogenerated>"
	}
	return f.funcID() == f.t.wrapperID()
}

// funcID returns the record's funcID, 0 where the release has none.
func (f Function) funcID() uint32 {
	switch f.t.layout.funcIDSize {
	case 1:
		return uint32(f.rec()[f.t.layout.funcID])
	case 4:
		return f.field(f.t.layout.funcID)
	}
	return 0
}

// pcdata returns the offset of the function's PCDATA table k, 0 if absent.
func (f Function) pcdata(k int) uint32 {
	l := &f.t.layout
	if k < 0 || uint32(k) >= f.field(l.npcdata) {
		return 0
	}
	return f.field(l.fixedSize + 4*k)
}

// funcdata returns the address of the function's FUNCDATA k.
func (f Function) funcdata(k int) (uint64, bool) {
	t := f.t
	rec := f.rec()
	if k < 0 || uint32(k) >= t.nfuncdata(rec) {
		return 0, false
	}
	off := uint64(t.layout.fixedSize) + 4*uint64(f.field(t.layout.npcdata))
	rd := t.hdr.rd
	if t.layout.funcdataIsPtr {
		base := t.addr + uint64(len(t.data)-len(t.hdr.funcs)) + uint64(f.off)
		if (base+off)%uint64(rd.ptrSize) != 0 {
			off += 4
		}
		p := rd.ptr(rec[off+uint64(k*rd.ptrSize):])
		return p, p != 0
	}
	v := rd.u32(rec[off+4*uint64(k):])
	if v == math.MaxUint32 {
		return 0, false
	}
	return t.gofunc + uint64(v), true
}

// fileLine returns the file and line at pc, which must lie in f.
func (f Function) fileLine(pc uint64) (string, uint32) {
	l := &f.t.layout
	line := f.t.pcvalue(f.field(l.pcln), f.entry, pc)
	fno := f.t.pcvalue(f.field(l.pcfile), f.entry, pc)
	return f.fileName(fno), uint32(max(line, 0))
}

// fileName resolves a pcfile value of f (FORMAT.md, "File names").
func (f Function) fileName(fno int32) string {
	t := f.t
	if t.hdr.magic == magic12 {
		return t.globalFile(fno)
	}
	if fno < 0 {
		return ""
	}
	cu := f.field(t.layout.cuOffset)
	if cu == math.MaxUint32 {
		return ""
	}
	off, ok := t.hdr.rd.u32At(t.hdr.cutab, 4*(uint64(cu)+uint64(fno)))
	if !ok || off == math.MaxUint32 {
		return ""
	}
	return t.files.at(uint64(off))
}

// globalFile resolves a 1-based index into the file table of Go 1.2–1.15.
// The table's count is the number of files in 1.2–1.7 and one more from 1.8
// (FORMAT.md, "Old file table"), so index count is valid in the former; a valid 1.8+ table
// never uses it, so it is accepted whatever the release.
func (t *Table) globalFile(fno int32) string {
	if fno < 1 {
		return ""
	}
	n, _ := t.hdr.rd.u32At(t.hdr.filetab, 0)
	if uint32(fno) > n {
		return ""
	}
	off, ok := t.hdr.rd.u32At(t.hdr.filetab, 4*uint64(fno))
	if !ok {
		return ""
	}
	return t.files.at(uint64(off))
}
