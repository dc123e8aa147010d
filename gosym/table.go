// Package gosym reads the symbol tables that the Go toolchain writes into
// every executable (the pclntab, the inline trees and the build info) and
// answers, without allocating, which function holds a PC, which source file
// and line it comes from, and which inlined calls wrap it.
//
// It reads binaries of every Go release from 1.2 on, for every operating
// system and architecture, through the small object.Object interface;
// package object opens ELF, Mach-O, PE and Plan 9 files.
//
// A Table speaks link-time addresses: for a position-independent executable
// loaded elsewhere, subtract the load bias from a runtime PC first, or turn
// the PC's file offset (from /proc/PID/maps) into an address with
// object.AddrOfFileOffset. Lookups
// take the address of an instruction; for a return address taken from a
// stack, look up pc-1 (unless it is a function's entry), as the runtime does.
package gosym

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gosym-dev/gosym/internal/addrspace"
	"github.com/gosym-dev/gosym/object"
)

// Table is the Go symbol table of one executable. Building one decodes only
// the table's header; functions are decoded when they are looked up. A
// Table is safe for concurrent use, and the strings it returns stay valid
// after Close.
//
// A Table keeps the line tables of the functions it resolves PCs in more
// than once, decoded, so that later lookups there are binary searches:
// about 0.6 bytes of memory per byte of their machine code, up to a limit
// (see SetLineCacheLimit). It also keeps one bit per function, and copies
// of the name and file tables, from which it hands out strings.
type Table struct {
	h    *header
	l    layout
	data []byte // the pclntab, from its magic
	addr uint64 // link-time address of data

	text      uint64        // runtime.text: base of 1.18+ entry offsets
	textSects []textSection // moduledata.textsectmap when text is split
	gofunc    uint64        // moduledata.gofunc: base of 1.18+ funcdata offsets
	funcIndex funcIndex     // moduledata.findfunctab: where a PC lookup starts
	valid     validFuncs    // functab entries whose records have been checked
	lines     lineCache     // decoded line tables of the functions looked up
	mem       *addrspace.Space

	foundBy struct{ pclntab, moduledata string }

	names, files *strtab
	version      string // from build info; "" if none
	wrapper      wrapperCache

	byName struct {
		once sync.Once
		idx  []uint32 // functab indices sorted by name
		err  error
	}

	closer io.Closer
	closed atomic.Bool
}

// Open opens the named executable and reads its Go symbol table. The file
// stays mapped until Close.
func Open(name string) (*Table, error) {
	f, err := object.Open(name)
	if err != nil {
		return nil, err
	}
	t, err := NewTable(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	t.closer = f
	return t, nil
}

// Close releases the file mapping of a Table made by Open. Strings returned
// earlier stay valid; lookups after Close return ErrClosed. Close of a
// Table made by NewTable does not close its Object.
func (t *Table) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	if t.closer != nil {
		return t.closer.Close()
	}
	return nil
}

// GoVersion returns the Go release that built the binary, such as
// "go1.26.8", as recorded in its build info (or, before Go 1.13, in
// runtime.buildVersion when the binary has symbols); "" if unknown.
func (t *Table) GoVersion() string { return t.version }

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
