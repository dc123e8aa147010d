package gosym

import (
	"cmp"
	"iter"
	"slices"
	"strings"
	"sync"
)

// LinePC is one place to stop at a source line.
type LinePC struct {
	PC       uint64   // the first PC of a run of instructions attributed to the line
	Func     Function // the physical function holding PC
	Function string   // the function the line belongs to: an inlinee, or Func itself
}

// Files yields every source file name the table records, once each, in
// the order of the table's file table (for Go 1.2–1.15, of first use).
// Names are as Location.File reports them. After Close it yields nothing.
func (t *Table) Files() iter.Seq[string] {
	return func(yield func(string) bool) {
		if t.closed.Load() {
			return
		}
		seen := map[string]bool{}
		emit := func(name string) bool {
			if name == "" || seen[name] {
				return true
			}
			seen[name] = true
			return yield(name)
		}
		if t.hdr.magic == magic12 {
			// The count, bounded by the offsets the table has room for.
			n, _ := t.hdr.rd.u32At(t.hdr.filetab, 0)
			n = uint32(min(uint64(n), uint64(max(len(t.hdr.filetab)-4, 0)/4)))
			for i := int32(1); uint32(i) <= n; i++ {
				if !emit(t.globalFile(i)) {
					return
				}
			}
			return
		}
		// Go 1.16+: the paths one after another, each NUL-terminated.
		for off, k := uint64(0), uint64(0); k < t.hdr.nfiles && off < uint64(len(t.hdr.filetab)); k++ {
			name, ok := t.files.lookup(off)
			if !ok || !emit(name) {
				return
			}
			off += uint64(len(name)) + 1
		}
	}
}

// LinePCs appends to buf[:0] the PCs where execution of file:line begins,
// in every physical function and every inlined copy that holds the line,
// in address order. file is a name as Files yields it, or a suffix of one
// that starts after a '/' ("net/http/server.go", "server.go"); a suffix
// that several files end in selects them all.
//
// The pclntab records no statement boundaries (DWARF's is_stmt), only
// which line each instruction belongs to. LinePCs reports one PC per copy
// of the line: for each physical function, and for each inlined call in
// it whose body holds the line, the lowest PC of the instructions
// attributed to file:line there, and no PC of a function's code where it
// is not the innermost frame (a call site gets no PC of its own where all
// its instructions are the inlined body's). TESTING.md compares this rule
// with DWARF's first is_stmt PC of each copy.
//
// A file that no function's code comes from, such as a misspelt name,
// gives an error that matches ErrFileNotFound and names the file; a file
// the binary has, at a line without code, gives no PC and a nil error.
//
// The first call builds an index of every function's line table (a pass
// over all of them; BenchmarkLinePCs measures it); later calls are binary
// searches and do not allocate when buf has room.
func (t *Table) LinePCs(file string, line uint32, buf []LinePC) ([]LinePC, error) {
	buf = buf[:0]
	if t.closed.Load() {
		return buf, ErrClosed
	}
	x, err := t.lineIndex()
	if err != nil {
		return buf, err
	}
	sorted, found := true, false
	ids, exact := x.fileIDs(file)
	for _, id := range ids {
		if !exact && !hasPathSuffix(x.files[id], file) {
			continue
		}
		found = true
		start := len(buf)
		k, _ := slices.BinarySearchFunc(x.entries, lineEntry{file: id, line: line}, compareLineEntries)
		for ; k < len(x.entries) && x.entries[k].file == id && x.entries[k].line == line; k++ {
			e := x.entries[k]
			f, _, err := t.funcAt(uint64(e.fn))
			if err != nil {
				return buf[:0], err
			}
			name := f.Name()
			if e.call >= 0 {
				if name, err = f.inlinedName(e.call); err != nil {
					return buf[:0], err
				}
			}
			buf = append(buf, LinePC{PC: e.pc, Func: f, Function: name})
		}
		if start > 0 && len(buf) > start {
			sorted = false
		}
	}
	if !found {
		return buf, &fileError{file}
	}
	if !sorted {
		slices.SortFunc(buf, func(a, b LinePC) int { return cmp.Compare(a.PC, b.PC) })
	}
	return buf, nil
}

// inlinedName returns the name of f's inlined call ix.
func (f Function) inlinedName(ix int32) (string, error) {
	tree, ok, err := f.inlineTree()
	if err != nil {
		return "", err
	}
	c, found := f.record(tree, ix)
	if !ok || !found {
		return "", f.formatError(errBadRecord)
	}
	return f.callName(c), nil
}

// lineIndex is the index behind LinePCs: for every copy of every line (a
// physical function's own code, or one inlined call in it), its lowest PC,
// sorted by file, line and PC.
type lineIndex struct {
	once    sync.Once
	err     error
	files   []string            // file names by id
	byBase  map[string][]uint32 // base name → ids of the files that have it
	entries []lineEntry
}

// lineEntry is one copy of a line.
type lineEntry struct {
	file, line uint32
	fn         uint32 // functab index
	call       int32  // inlined call, as FunctionLine.Call; -1: fn's own code
	pc         uint64
}

func compareLineEntries(a, b lineEntry) int {
	if c := cmp.Compare(a.file, b.file); c != 0 {
		return c
	}
	if c := cmp.Compare(a.line, b.line); c != 0 {
		return c
	}
	return cmp.Compare(a.pc, b.pc)
}

// fileIDs returns the ids of the files that name selects: the file of
// that name, else every file whose name ends in "/"+name (exact false:
// the caller checks hasPathSuffix).
func (x *lineIndex) fileIDs(name string) (ids []uint32, exact bool) {
	ids = x.byBase[name[strings.LastIndexByte(name, '/')+1:]]
	for k, id := range ids {
		if x.files[id] == name {
			return ids[k : k+1], true
		}
	}
	return ids, false
}

// hasPathSuffix reports whether name ends in "/"+suffix.
func hasPathSuffix(name, suffix string) bool {
	return len(name) > len(suffix) && name[len(name)-len(suffix)-1] == '/' && strings.HasSuffix(name, suffix)
}

// lineIndex builds the index on first use.
func (t *Table) lineIndex() (*lineIndex, error) {
	x := &t.byLine
	x.once.Do(func() { x.err = t.buildLineIndex(x) })
	return x, x.err
}

func (t *Table) buildLineIndex(x *lineIndex) error {
	ids := map[string]uint32{}
	x.byBase = map[string][]uint32{}
	var lines []FunctionLine
	var copies []lineEntry
	for f, err := range t.Functions() {
		if err != nil {
			return err
		}
		if lines, err = f.Lines(lines); err != nil {
			return err
		}
		copies = copies[:0]
		for _, l := range lines {
			if l.File == "" || l.Line == 0 {
				continue
			}
			id, ok := ids[l.File]
			if !ok {
				id = uint32(len(x.files))
				ids[l.File] = id
				x.files = append(x.files, l.File)
				base := l.File[strings.LastIndexByte(l.File, '/')+1:]
				x.byBase[base] = append(x.byBase[base], id)
			}
			copies = append(copies, lineEntry{file: id, line: l.Line, fn: f.idx, call: int32(l.Call), pc: l.PCLo})
		}
		// One entry per copy: the lowest PC of each (file, line, call).
		slices.SortFunc(copies, func(a, b lineEntry) int {
			if c := compareLineEntries(lineEntry{file: a.file, line: a.line}, lineEntry{file: b.file, line: b.line}); c != 0 {
				return c
			}
			if c := cmp.Compare(a.call, b.call); c != 0 {
				return c
			}
			return cmp.Compare(a.pc, b.pc)
		})
		for i, c := range copies {
			if i > 0 && c.file == copies[i-1].file && c.line == copies[i-1].line && c.call == copies[i-1].call {
				continue
			}
			x.entries = append(x.entries, c)
		}
	}
	slices.SortFunc(x.entries, compareLineEntries)
	x.entries = slices.Clip(x.entries)
	return nil
}
