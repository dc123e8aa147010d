package gosym

import (
	"cmp"
	"iter"
	"slices"
	"strings"
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
// The first call walks every function's pcfile table, to find which
// functions hold which files; the first query of a file decodes the line
// tables of the functions that hold it, and keeps the lowest PC of every
// copy of its lines (BenchmarkFirstLinePCs and BenchmarkLinePCs measure
// both). Later queries of the file are binary searches, and do not
// allocate when buf has room. The memory and the work are bounded by the
// size of the table, however its functions share line tables: a table
// whose line tables decode to far more ranges than it has bytes (many
// long functions sharing one long line table, which no linker writes)
// makes LinePCs fail with a *FormatError.
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
		if buf, err = x.appendLine(t, id, line, buf); err != nil {
			return buf[:0], err
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

// hasPathSuffix reports whether name ends in "/"+suffix.
func hasPathSuffix(name, suffix string) bool {
	return len(name) > len(suffix) && name[len(name)-len(suffix)-1] == '/' && strings.HasSuffix(name, suffix)
}

// NextLine returns the first line at or after line that has code in file,
// the line a debugger moves a breakpoint to when the one asked for has
// none (a comment, a declaration, a blank line). file is matched as in
// LinePCs, and a file the binary lacks gives an error that matches
// ErrFileNotFound. It returns 0 and a nil error when no line at or after
// line has code in the file. LinePCs(file, NextLine(file, line)) then
// gives that line's PCs.
func (t *Table) NextLine(file string, line uint32) (uint32, error) {
	if t.closed.Load() {
		return 0, ErrClosed
	}
	x, err := t.lineIndex()
	if err != nil {
		return 0, err
	}
	found := false
	next := uint32(0)
	ids, exact := x.fileIDs(file)
	for _, id := range ids {
		if !exact && !hasPathSuffix(x.files[id], file) {
			continue
		}
		found = true
		l, err := x.nextLine(t, id, line)
		if err != nil {
			return 0, err
		}
		if l != 0 && (next == 0 || l < next) {
			next = l
		}
	}
	if !found {
		return 0, &fileError{file}
	}
	return next, nil
}
