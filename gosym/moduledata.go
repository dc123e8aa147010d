package gosym

import (
	"bytes"
	"encoding/binary"

	"github.com/gosym-dev/gosym/object"
)

// moduledata (FORMAT.md, "Moduledata") is the linker-written struct the runtime uses to
// find its tables. From Go 1.18 a reader needs two of its fields: text,
// the base of function entry offsets (the header's copy is unreliable and
// is 0 from 1.26), and gofunc, the base of funcdata offsets; findfunctab
// speeds up PC lookups. Go 1.26 puts it in its own section; earlier
// releases leave it in the data, where it is found by its first word, the
// pclntab's address.

// moduledataLayout gives the word indices of the fields a reader needs.
type moduledataLayout struct {
	gofunc, textsectmap int
}

// Fixed word indices of Go 1.16 and later.
const (
	mdPcHeader    = 0
	mdPclntable   = 13
	mdFtab        = 16
	mdFindfunctab = 19
	mdMinPC       = 20
	mdMaxPC       = 21
	mdText        = 22
	mdEtext       = 23
)

// The first WebAssembly PC, the entry of the module's first function
// (FORMAT.md, "WebAssembly"): wasmMinPC up to Go 1.27; from Go 1.28
// wasmHighBit, the bit set in every PC.
const (
	wasmMinPC   = 0x1000 << 16
	wasmHighBit = 1 << 63
)

func moduledataLayoutFor(minor int) moduledataLayout {
	switch {
	case minor <= 19:
		return moduledataLayout{gofunc: 38, textsectmap: 39}
	case minor <= 25:
		return moduledataLayout{gofunc: 40, textsectmap: 41}
	case minor == 26:
		return moduledataLayout{gofunc: 40, textsectmap: 42}
	}
	return moduledataLayout{gofunc: 43, textsectmap: 45}
}

// findModuledata sets t.text, t.gofunc and t.textSects.
func (t *Table) findModuledata(obj object.Object, secs []object.SectionHeader) error {
	minors := []int{t.layout.minor}
	if !t.wrapper.known && t.hdr.magic == magic120 {
		minors = []int{27, 26, 20}
	}
	try := func(b []byte) bool {
		for _, m := range minors {
			if t.parseModuledata(b, moduledataLayoutFor(m)) {
				if len(minors) > 1 {
					// The layout that matched bounds the release.
					t.layout = layoutFor(t.hdr.magic, m, t.hdr.rd.ptrSize)
				}
				return true
			}
		}
		return false
	}
	// Each candidate is read with pread (copyData) into md, which holds
	// every layout's words.
	ob, release := t.openBuf()
	defer release()
	md := ob.md[:]
	tryAt := func(b []byte) bool { return try(md[:t.copyData(md, b)]) }
	for i, s := range secs {
		if s.Name == ".go.module" || s.Name == "__go_module" {
			if b, err := obj.SectionData(i); err == nil && tryAt(b) {
				t.foundBy.moduledata = "section " + s.Name
				return nil
			}
		}
	}
	sl, hasSyms := obj.(object.SymbolLookup)
	if hasSyms {
		if sym, err := sl.LookupSymbol("runtime.firstmoduledata"); err == nil && tryAt(t.mem.From(sym.Addr)) {
			t.foundBy.moduledata = "symbol runtime.firstmoduledata"
			return nil
		}
	}
	// Scan writable data for the pclntab's address at aligned positions.
	p := t.hdr.rd.ptrSize
	var pat [8]byte
	if t.hdr.rd.bigEndian {
		binary.BigEndian.PutUint64(pat[:], t.addr)
	} else {
		binary.LittleEndian.PutUint64(pat[:], t.addr)
	}
	key := pat[:p]
	if t.hdr.rd.bigEndian {
		key = pat[8-p:]
	}
	// The linkers put runtime.firstmoduledata in the no-pointer data: that
	// section is scanned first, the others after it. The scan reads the
	// sections in chunks with pread (copyData): each page it read through
	// a freshly mapped file would cost a page fault.
	chunk := ob.scan[:]
	for _, noptr := range []bool{true, false} {
		for i, s := range secs {
			if s.Flags&object.SectionWrite == 0 || s.Flags&object.SectionExec != 0 || s.FileSize == 0 || isNoptrdata(s.Name) != noptr {
				continue
			}
			b, err := obj.SectionData(i)
			if err != nil {
				continue
			}
			if t.scanModuledata(b, s.Addr, key, chunk, tryAt) {
				t.foundBy.moduledata = "scan of " + sectionName(s)
				return nil
			}
		}
	}
	// Last resort: the symbols runtime.text and go:func.* (the header's
	// textStart is not trusted: it is 0 from Go 1.26).
	if hasSyms {
		text, err1 := sl.LookupSymbol("runtime.text")
		gofunc, err2 := sl.LookupSymbol("go:func.*")
		if err2 != nil {
			gofunc, err2 = sl.LookupSymbol("go.func.*")
		}
		if err1 == nil && err2 == nil {
			t.text, t.gofunc = text.Addr, gofunc.Addr
			t.foundBy.moduledata = "symbols runtime.text and go:func.*"
			return nil
		}
	}
	return corrupt("cannot locate moduledata (text and funcdata bases)")
}

// mdReadSize is how many bytes of a candidate moduledata findModuledata
// reads: more than the words of every layout (moduledataLayoutFor's
// textsectmap+3 words of 8 bytes).
const mdReadSize = 64 * 8

// mdScanChunk is how many bytes of a section the scan for the moduledata
// reads with one pread.
const mdScanChunk = 64 << 10

// scanModuledata finds the positions of b, section data loaded at addr,
// where key (the pclntab's address, a word of p = len(key) bytes) is
// stored at an address aligned to p, in order, and calls try with the
// bytes from each until it returns true. It reads b through chunk with
// copyData, one chunk at a time: consecutive chunks overlap by a word
// less one byte, so that a word across the end of one is whole in the
// next, and a position is tried only in the first chunk that holds its
// word whole. try is given the candidate's first mdReadSize bytes from
// the chunk where it holds them, else the candidate in b, which try reads
// itself.
func (t *Table) scanModuledata(b []byte, addr uint64, key, chunk []byte, try func([]byte) bool) bool {
	p := len(key)
	step := len(chunk) - (p - 1)
	for start := 0; start < len(b); start += step {
		c := chunk[:t.copyData(chunk, b[start:])]
		limit := min(step, len(c)) // positions from limit on are the next chunk's
		for off := 0; off < limit; {
			j := indexAligned(c[off:], key, p, (addr+uint64(start+off))%uint64(p))
			if j < 0 || off+j >= limit {
				break
			}
			cand := b[start+off+j:]
			if at := off + j; len(c)-at >= mdReadSize {
				cand = c[at : at+mdReadSize]
			}
			if try(cand) {
				return true
			}
			off += j + p
		}
	}
	return false
}

// isNoptrdata reports whether a section is the no-pointer data, where
// the linkers put runtime.firstmoduledata (.noptrdata in ELF and XCOFF,
// __noptrdata in Mach-O).
func isNoptrdata(name string) bool {
	return name == ".noptrdata" || name == "__noptrdata"
}

// indexAligned returns the first index i of key in b with (i+mis) a
// multiple of align, or -1.
func indexAligned(b, key []byte, align int, mis uint64) int {
	for off := 0; ; {
		i := bytes.Index(b[off:], key)
		if i < 0 {
			return -1
		}
		if (uint64(off+i)+mis)%uint64(align) == 0 {
			return off + i
		}
		off += i + 1
	}
}

// parseModuledata validates a candidate moduledata at the start of b and,
// if it belongs to this table, takes its fields.
func (t *Table) parseModuledata(b []byte, ml moduledataLayout) bool {
	rd := t.hdr.rd
	p := uint64(rd.ptrSize)
	nwords := uint64(ml.textsectmap + 3)
	if uint64(len(b)) < nwords*p {
		return false
	}
	w := func(i int) uint64 { return rd.ptr(b[uint64(i)*p:]) }
	functab := t.addr + uint64(len(t.data)-len(t.hdr.funcs))
	if w(mdPcHeader) != t.addr || w(mdPclntable) != functab || w(mdFtab) != functab || w(mdFtab+1) != t.hdr.nfunc+1 {
		return false
	}
	text, etext, minpc, maxpc := w(mdText), w(mdEtext), w(mdMinPC), w(mdMaxPC)
	// WebAssembly's PCs are not in the text's address space: the Go
	// linker leaves text at 0 and etext at 16 bytes per function, and the
	// entry PC of a function is its index plus 0x1000, shifted left 16
	// bits, or from Go 1.28 its index shifted left 16 bits with bit 63
	// set (FORMAT.md, "WebAssembly"): the first one is 0x1000<<16 or
	// 1<<63. The module's own minpc tells which. A linker may as well
	// start the text itself at bit 63 (text = minpc = 1<<63, etext past
	// it), with the same PCs: highText. A native table whose text is at
	// 1<<63 looks the same to those words, so highText also wants what
	// the runtime checks of a wasm module (moduledataverify1): the end
	// entry, a function index, is maxpc rounded up to a function. A
	// native end entry is the text's size, maxpc-text.
	highText := text == wasmHighBit && minpc == wasmHighBit && etext >= text && t.hdr.nfunc > 0 &&
		(maxpc&^wasmHighBit+1<<16-1)>>16 == uint64(t.openEntryOff(t.hdr.nfunc))
	wasm := text == 0 && (minpc == wasmMinPC || minpc == wasmHighBit) && etext < minpc || highText
	if !(text <= minpc && minpc <= maxpc && (maxpc <= etext || wasm)) {
		return false
	}
	gofunc := w(ml.gofunc)
	if gofunc == 0 || t.mem.From(gofunc) == nil {
		return false
	}
	sects, n, c := w(ml.textsectmap), w(ml.textsectmap+1), w(ml.textsectmap+2)
	if n > c || n > 1<<10 {
		return false
	}
	var ts []textSection
	if n > 1 {
		raw := t.mem.Slice(sects, n*3*p)
		if raw == nil {
			return false
		}
		ts = make([]textSection, n)
		for i := range ts {
			e := raw[uint64(i)*3*p:]
			ts[i] = textSection{vaddr: rd.ptr(e), end: rd.ptr(e[p:]), base: rd.ptr(e[2*p:])}
		}
	}
	oldText, oldGofunc, oldSects, oldWasm, oldWasmHigh := t.text, t.gofunc, t.textSects, t.wasm, t.wasmHigh
	t.text, t.gofunc, t.textSects, t.wasm, t.wasmHigh = text, gofunc, ts, false, 0
	// The first entry's text offset, read once with pread (openEntryOff).
	var first uint32
	if t.hdr.nfunc > 0 {
		first = t.openEntryOff(0)
	}
	if t.hdr.nfunc > 0 && (t.textAddr(first) != minpc || highText) && wasm {
		// The functab of a WebAssembly module holds function
		// indexes (PC>>16) since Go 1.25, the PCs themselves before;
		// from Go 1.28 without the 0x1000 and with bit 63 set in
		// every PC, which the first entry must then give back. Text
		// at bit 63 holds indexes too (the first entry, index 0,
		// would give back minpc either way): its PCs are the bit
		// and the index, as with text at 0.
		t.wasm, t.wasmHigh = true, minpc&wasmHighBit
		t.text &^= wasmHighBit
	}
	if t.hdr.nfunc > 0 && t.textAddr(first) != minpc {
		t.text, t.gofunc, t.textSects, t.wasm, t.wasmHigh = oldText, oldGofunc, oldSects, oldWasm, oldWasmHigh
		return false
	}
	t.funcIndex = t.newFuncIndex(w(mdFindfunctab), minpc, maxpc, first)
	return true
}
