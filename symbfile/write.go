package symbfile

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/budget"
	"github.com/gosym-dev/gosym/object"
)

// Write emits the symbol table t as a symbfile: by default the file of
// ranges, one RangeV1 record for each contiguous run of PCs of every
// physical function (depth 0) and of every inlined call in it (depth ≥ 1,
// with its call file and call line), each with its source file and line
// table; with WithReturnPads, the file of return pads instead, one
// ReturnPadV1 record for the address after every call instruction, minus
// 1, with the whole inline stack there. What the records mean, and how
// they are laid out, is described in the package documentation and in
// FORMAT.md. Addresses are link-time addresses, as t's.
//
// The output depends only on t: the same binary gives the same bytes.
// Write holds a chunk of records in memory (up to 4 MiB of distinct
// strings, 2^20 records and line entries) before it writes them, after the
// string table they refer to. It fails with an error wrapping
// gosym.ErrCorrupted when the names or records would be out of proportion
// with the binary (the package documentation, "Bounds").
func Write(w io.Writer, t *gosym.Table, opts ...Option) error {
	o := makeOptions(opts)
	b := &builder{w: w, strIdx: make(map[string]int32), pads: o.returnPads}
	b.budget = limit(t.Object())
	var find callFinder
	if o.returnPads {
		arch := ""
		if d, ok := t.Object().(object.Describer); ok {
			arch = d.Arch()
		}
		var err error
		if find, err = callFinderFor(arch, t.Object()); err != nil {
			return err
		}
	}
	b.out = append(b.out, magic...)
	b.message(mtHeader, nil)
	var err error
	if o.returnPads {
		err = b.addAllPads(t, find)
	} else {
		err = b.addAllRanges(t)
	}
	if err != nil {
		return err
	}
	if err := b.flush(); err != nil {
		return err
	}
	_, err = w.Write(b.out)
	return err
}

// addAllRanges adds the ranges of every function of t, in address order.
func (b *builder) addAllRanges(t *gosym.Table) error {
	for f, err := range t.Functions() {
		if err != nil {
			return err
		}
		if err := b.addFunction(f); err != nil {
			return err
		}
		if err := b.flushIfFull(); err != nil {
			return err
		}
	}
	return nil
}

// flushIfFull checks the budget, and writes the chunk once its strings
// take maxTable bytes or its records maxChunk entries.
func (b *builder) flushIfFull() error {
	if b.names > b.budget {
		return fmt.Errorf("symbfile: %w: names total more than %d bytes, out of proportion with the binary (names that overlap, without NUL bytes?)", gosym.ErrCorrupted, b.budget)
	}
	if b.entries > b.budget {
		return fmt.Errorf("symbfile: %w: more than %d records and line entries, out of proportion with the binary (functions that share long tables?)", gosym.ErrCorrupted, b.budget)
	}
	if b.strBytes >= maxTable || len(b.recs)+len(b.lines)+len(b.padFrames) >= maxChunk {
		return b.flush()
	}
	return nil
}

// maxChunk bounds the records and line entries Write holds in memory.
const maxChunk = 1 << 20

// limit returns how many bytes of names, and how many records, line
// entries and return pad frames, Write accepts from obj: the name budget
// of the export formats (budget.Names: twice the bytes the sections span
// in the file, and 1 MiB), with the span counted up to 2 GiB. A sound
// binary holds each name at least once, and each line entry, range and
// call at least as a byte of its tables or code; the margin is for what
// the sections leave out and for the tables the linker shares between
// functions. Damaged tables (a name table without NUL bytes, many
// functions that share one long line table) would otherwise make a file,
// and use memory, out of proportion with the binary.
func limit(obj object.Object) int {
	return int(min(budget.Names(obj), 2*math.MaxInt32+1<<20, math.MaxInt))
}

// decodeMu serializes the decoding of code: golang.org/x/arch's decoders
// record which of their table entries matched in a package variable (for
// their own tests), so that two decodings at once are a data race.
var decodeMu sync.Mutex

// addAllPads adds the return pads of every function of t, in address
// order. The calls are found (the code decoded, one function after the
// other) by a goroutine of their own, while this one makes the records of
// the functions found before: decoding takes about half the time, and it
// cannot itself run in parallel (decodeMu).
func (b *builder) addAllPads(t *gosym.Table, find callFinder) error {
	type calls struct {
		f    gosym.Function
		rets []uint64
		err  error
	}
	found := make(chan calls, 256)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(found)
		send := func(c calls) bool {
			select {
			case found <- c:
				return true
			case <-stop:
				return false
			}
		}
		for f, err := range t.Functions() {
			if err != nil {
				send(calls{err: err})
				return
			}
			if f.End() <= f.Entry() {
				continue
			}
			code, err := f.Code()
			if err != nil {
				send(calls{err: err})
				return
			}
			decodeMu.Lock()
			rets := find(code, f.Entry(), nil)
			decodeMu.Unlock()
			if len(rets) > 0 && !send(calls{f: f, rets: rets}) {
				return
			}
		}
	}()
	for c := range found {
		if c.err != nil {
			return c.err
		}
		if err := b.addPads(c.f, c.rets); err != nil {
			return err
		}
		if err := b.flushIfFull(); err != nil {
			return err
		}
	}
	return nil
}

// Whether the file of a range is known.
const (
	fileUnknown     = iota
	fileProvisional // the call file of its first inlined call: where it is no innermost frame
	fileKnown       // its file where it is the innermost frame
)

// rec is a range being built or written: strings are indices in the
// builder's strings.
type rec struct {
	va, length     uint64
	fn, file       int32
	callFile       int32
	callLine       uint32
	depth          uint32
	parent         int32 // the range of depth-1 that holds it; -1 at depth 0
	fileState      uint8
	lineLo, lineHi int32 // its line table: lines[lineLo:lineHi]
}

// lineEntry is one line table entry: an offset from the range's start and
// the line from there on.
type lineEntry struct{ off, line uint32 }

// openRange is a range of the function being read that has not ended yet.
type openRange struct {
	rec   int32
	call  int // the inlined call it is a range of; -1 for the function itself
	lines []lineEntry
}

// pad is a return pad: its address and its frames, frames[lo:hi],
// outermost first.
type pad struct {
	va     uint64
	lo, hi int32
}

type padFrame struct {
	fn, file int32
	line     uint32
}

// builder accumulates records, a chunk at a time: the records that share
// a string table.
type builder struct {
	w    io.Writer
	out  []byte // output not yet written
	msg  []byte // the message being encoded
	tmp  []byte // a nested message being encoded
	pads bool

	prevVA uint64 // the address of the last record written
	haveVA bool

	// The chunk: strings, how often records use each, records.
	strIdx   map[string]int32
	strs     []string
	uses     []int32
	strBytes int
	// What has been added, against the budget.
	names, entries, budget int
	recs                   []rec
	lines                  []lineEntry
	padRecs                []pad
	padFrames              []padFrame

	// Per-function state, reused.
	fl    []gosym.FunctionLine
	calls []gosym.InlinedCall
	stack []int
	open  []openRange
}

// str returns the index of s in the chunk's strings.
func (b *builder) str(s string) int32 {
	if i, ok := b.strIdx[s]; ok {
		return i
	}
	i := int32(len(b.strs))
	b.strIdx[s] = i
	b.strs = append(b.strs, s)
	b.uses = append(b.uses, 0)
	b.strBytes += len(s) + 2
	b.names += len(s)
	return i
}

// lines returns f's ranges and inlined calls, checking that the ranges
// tile f and that every call is a valid index whose parent comes before
// it.
func (b *builder) functionLines(f gosym.Function) error {
	entry, end := f.Entry(), f.End()
	if end-entry > math.MaxUint32 {
		return fmt.Errorf("symbfile: %w: %s: function of %d bytes", gosym.ErrCorrupted, f.Name(), end-entry)
	}
	fl, err := f.Lines(b.fl)
	b.fl = fl
	if err != nil {
		return err
	}
	if len(fl) == 0 || fl[0].PCLo != entry || fl[len(fl)-1].PCHi != end {
		return fmt.Errorf("symbfile: %w: %s: lines do not cover [%#x, %#x)", gosym.ErrCorrupted, f.Name(), entry, end)
	}
	calls, err := f.InlinedCalls(b.calls)
	b.calls = calls
	if err != nil {
		return err
	}
	for k := range fl {
		if c := fl[k].Call; c >= len(calls) {
			return fmt.Errorf("symbfile: %w: %s: range at %#x in inlined call %d of %d", gosym.ErrCorrupted, f.Name(), fl[k].PCLo, c, len(calls))
		}
	}
	for c := range calls {
		if p := calls[c].Parent; p >= c {
			return fmt.Errorf("symbfile: %w: %s: inlined call %d has parent %d", gosym.ErrCorrupted, f.Name(), c, p)
		}
	}
	return nil
}

// stackOf sets b.stack to the inlined calls at piece k, outermost first,
// starting with -1 for the function itself.
func (b *builder) stackOf(k int) {
	s := append(b.stack[:0], -1)
	for c := b.fl[k].Call; c >= 0; c = b.calls[c].Parent {
		s = append(s, c)
	}
	slices.Reverse(s[1:])
	b.stack = s
}

// name returns the function of the frame that stack element c stands for.
func (b *builder) name(f gosym.Function, c int) string {
	if c < 0 {
		return f.Name()
	}
	return b.calls[c].Name
}

// addFunction adds the ranges of one physical function (the package
// documentation, "Ranges"). A range at depth d goes on as long as the
// pieces of f's Lines are in the same inlined call at depth d (or in f,
// for d = 0) and, where it is the innermost frame, in the same file.
func (b *builder) addFunction(f gosym.Function) error {
	entry, end := f.Entry(), f.End()
	if end <= entry {
		return nil
	}
	if err := b.functionLines(f); err != nil {
		return err
	}
	nopen := 0
	for k := range b.fl {
		p := &b.fl[k]
		b.stackOf(k)
		last := len(b.stack) - 1
		d := 0
		for d < nopen && d <= last && b.open[d].call == b.stack[d] {
			d++
		}
		if d > last {
			if r := &b.recs[b.open[last].rec]; r.fileState == fileKnown && b.strs[r.file] != p.File {
				d = last
			}
		}
		b.closeFrom(d, nopen, p.PCLo)
		for e := d; e <= last; e++ {
			r := rec{va: p.PCLo, depth: uint32(e), fn: b.str(validString(b.name(f, b.stack[e]))), parent: -1}
			if e > 0 {
				c := &b.calls[b.stack[e]]
				r.parent = b.open[e-1].rec
				r.callFile, r.callLine = b.str(validString(c.CallFile)), c.CallLine
				if pr := &b.recs[r.parent]; pr.fileState == fileUnknown {
					pr.file, pr.fileState = r.callFile, fileProvisional
				}
			}
			if e == len(b.open) {
				b.open = append(b.open, openRange{})
			}
			b.open[e] = openRange{rec: int32(len(b.recs)), call: b.stack[e], lines: b.open[e].lines[:0]}
			b.recs = append(b.recs, r)
		}
		nopen = last + 1
		o := &b.open[last]
		r := &b.recs[o.rec]
		if r.fileState != fileKnown {
			r.file, r.fileState = b.str(validString(p.File)), fileKnown
		}
		prev := uint32(0)
		if n := len(o.lines); n > 0 {
			prev = o.lines[n-1].line
		}
		if p.Line != prev {
			o.lines = append(o.lines, lineEntry{uint32(p.PCLo - r.va), p.Line})
		}
	}
	b.closeFrom(0, nopen, end)
	return nil
}

// closeFrom ends the open ranges at depth d and deeper (of nopen) at end.
func (b *builder) closeFrom(d, nopen int, end uint64) {
	for e := nopen - 1; e >= d; e-- {
		o := &b.open[e]
		r := &b.recs[o.rec]
		r.length = end - r.va
		r.lineLo = int32(len(b.lines))
		b.lines = append(b.lines, o.lines...)
		r.lineHi = int32(len(b.lines))
		b.entries += 1 + len(o.lines)
	}
}

// addPads adds the return pads of one physical function, whose call
// instructions end at rets: for every call instruction in its code, the
// address after it minus 1 and the frames there, outermost first, as the
// proto defines them: each frame's function, and the file and line where
// it is, that of the call site of the next frame for every frame but the
// innermost.
func (b *builder) addPads(f gosym.Function, rets []uint64) error {
	if len(rets) == 0 {
		return nil
	}
	if err := b.functionLines(f); err != nil {
		return err
	}
	k := 0
	for _, ret := range rets {
		pc := ret - 1
		for k < len(b.fl)-1 && b.fl[k].PCHi <= pc {
			k++
		}
		p := &b.fl[k]
		b.stackOf(k)
		lo := int32(len(b.padFrames))
		for e, c := range b.stack {
			fr := padFrame{fn: b.str(validString(b.name(f, c)))}
			if e < len(b.stack)-1 {
				call := &b.calls[b.stack[e+1]]
				fr.file, fr.line = b.str(validString(call.CallFile)), call.CallLine
			} else {
				fr.file, fr.line = b.str(validString(p.File)), p.Line
			}
			b.padFrames = append(b.padFrames, fr)
		}
		b.padRecs = append(b.padRecs, pad{va: pc, lo: lo, hi: int32(len(b.padFrames))})
		b.entries += len(b.stack)
	}
	return nil
}

// message appends a message of type typ with body body to the output,
// and writes the output when it has grown.
func (b *builder) message(typ int, body []byte) error {
	if len(body) > maxMessage {
		return fmt.Errorf("symbfile: a message of %d bytes, more than readers accept (%d)", len(body), maxMessage)
	}
	b.out = appendVarint(b.out, uint64(len(body)))
	b.out = appendVarint(b.out, uint64(typ))
	b.out = append(b.out, body...)
	if len(b.out) >= 64<<10 {
		if _, err := b.w.Write(b.out); err != nil {
			return err
		}
		b.out = b.out[:0]
	}
	return nil
}

// flush writes the chunk: its string table, then its records.
func (b *builder) flush() error {
	if len(b.recs) == 0 && len(b.padRecs) == 0 {
		return nil
	}
	// Count the uses of each string, as the records will be written.
	for i := range b.recs {
		r := &b.recs[i]
		b.uses[r.fn]++
		if b.strs[r.file] != "" {
			b.uses[r.file]++
		}
		if b.writeCallFile(r) {
			b.uses[r.callFile]++
		}
	}
	for _, fr := range b.padFrames {
		b.uses[fr.fn]++
		b.uses[fr.file]++
	}
	// The table holds the strings used more than once (every string of
	// return pads, which can only refer to the table), the most used
	// first, so that their references are shortest; the others are
	// written in place. ref maps a string to its table index, or -1.
	order := make([]int32, 0, len(b.strs))
	for i, n := range b.uses {
		if n > 1 || n == 1 && b.pads {
			order = append(order, int32(i))
		}
	}
	slices.SortStableFunc(order, func(x, y int32) int { return cmp.Compare(b.uses[y], b.uses[x]) })
	ref := make([]int32, len(b.strs))
	for i := range ref {
		ref[i] = -1
	}
	b.msg = b.msg[:0]
	for j, i := range order {
		ref[i] = int32(j)
		b.msg = appendString(b.msg, stStrings, b.strs[i])
	}
	if err := b.message(mtStringTable, b.msg); err != nil {
		return err
	}
	str := func(m []byte, inPlace, byRef int, s int32) []byte {
		if j := ref[s]; j >= 0 {
			return appendUint(m, byRef, uint64(j), true)
		}
		return appendString(m, inPlace, b.strs[s])
	}
	for i := range b.recs {
		r := &b.recs[i]
		m := b.va(b.msg[:0], rDeltaVA, rSetVA, r.va)
		m = appendUint(m, rLength, r.length, false)
		m = str(m, rFuncStr, rFuncRef, r.fn)
		if b.strs[r.file] != "" {
			m = str(m, rFileStr, rFileRef, r.file)
		}
		m = appendUint(m, rCallLine, uint64(r.callLine), false)
		if b.writeCallFile(r) {
			m = str(m, rCallFileStr, rCallFileRef, r.callFile)
		}
		m = appendUint(m, rDepth, uint64(r.depth), false)
		if r.lineHi > r.lineLo {
			b.tmp = b.lineTable(b.tmp[:0], b.lines[r.lineLo:r.lineHi])
			m = appendVarint(appendTag(m, rLineTable, wireLen), uint64(len(b.tmp)))
			m = append(m, b.tmp...)
		}
		b.msg = m
		if err := b.message(mtRangeV1, m); err != nil {
			return err
		}
	}
	var col []uint32
	for _, p := range b.padRecs {
		m := b.va(b.msg[:0], pDeltaVA, pSetVA, p.va)
		frames := b.padFrames[p.lo:p.hi]
		col = col[:0]
		for _, fr := range frames {
			col = append(col, uint32(ref[fr.fn]))
		}
		m = appendPacked(m, pFunc, col)
		col = col[:0]
		for _, fr := range frames {
			col = append(col, uint32(ref[fr.file]))
		}
		m = appendPacked(m, pFile, col)
		col = col[:0]
		for _, fr := range frames {
			col = append(col, fr.line)
		}
		m = appendPacked(m, pLine, col)
		b.msg = m
		if err := b.message(mtReturnPadV1, m); err != nil {
			return err
		}
	}
	clear(b.strIdx)
	b.strs, b.uses, b.strBytes = b.strs[:0], b.uses[:0], 0
	b.recs, b.lines, b.padRecs, b.padFrames = b.recs[:0], b.lines[:0], b.padRecs[:0], b.padFrames[:0]
	return nil
}

// writeCallFile reports whether range r needs its call file written: an
// inlined call whose call file is not the file of the range it is in
// (which the reader takes when the call file is left out).
func (b *builder) writeCallFile(r *rec) bool {
	return r.depth > 0 && b.strs[r.callFile] != b.strs[b.recs[r.parent].file]
}

// va appends the address field of a record: relative to the last
// record's, or absolute for the first.
func (b *builder) va(m []byte, delta, set int, va uint64) []byte {
	if b.haveVA {
		m = appendSint(m, delta, int64(va-b.prevVA))
	} else {
		m = appendUint(m, set, va, true)
	}
	b.prevVA, b.haveVA = va, true
	return m
}

// lineTable appends the LineTable message of entries: offsets as
// differences from the previous one, lines as they are.
func (b *builder) lineTable(m []byte, entries []lineEntry) []byte {
	n := 0
	prev := uint32(0)
	for _, e := range entries {
		n += varintLen(uint64(e.off - prev))
		prev = e.off
	}
	m = appendVarint(appendTag(m, ltOffset, wireLen), uint64(n))
	prev = 0
	for _, e := range entries {
		m = appendVarint(m, uint64(e.off-prev))
		prev = e.off
	}
	n = 0
	for _, e := range entries {
		n += varintLen(uint64(e.line))
	}
	if n > 0 {
		m = appendVarint(appendTag(m, ltLine, wireLen), uint64(n))
		for _, e := range entries {
			m = appendVarint(m, uint64(e.line))
		}
	}
	return m
}
