package gosym

import (
	"fmt"
	"io"
	"sync/atomic"

	"github.com/gosym-dev/gosym/internal/addrspace"
	"github.com/gosym-dev/gosym/internal/buildinfo"
	"github.com/gosym-dev/gosym/internal/objfile"
	"github.com/gosym-dev/gosym/object"
)

// Table is the Go symbol table of one executable. Building one decodes only
// the table's header; functions are decoded when they are looked up. A
// Table is safe for concurrent use, and what it returns stays valid after
// Close (see the package documentation, "Lifetime").
//
// A Table keeps the line tables of the functions it resolves PCs in more
// than once, decoded, so that later lookups there are binary searches:
// about 0.6 bytes of memory per byte of their machine code, up to a limit
// (see SetLineCacheLimit). It also keeps one bit per function, and copies
// of the name and file tables, from which it hands out strings.
type Table struct {
	obj    object.Object // what the table was read from; kept reachable for the bytes below
	hdr    *header       // the pclntab's header and the sub-tables it locates
	layout layout        // where the fields of this release's records are
	data   []byte        // the pclntab, from its magic
	addr   uint64        // link-time address of data

	text      uint64        // runtime.text: base of 1.18+ entry offsets
	textSects []textSection // moduledata.textsectmap when text is split
	wasm      bool          // WebAssembly: 1.18+ entry offsets are PC>>16 (FORMAT.md, "WebAssembly")
	wasmHigh  uint64        // WebAssembly: bits set in every PC, 1<<63 from Go 1.28, else 0
	gofunc    uint64        // moduledata.gofunc: base of 1.18+ funcdata offsets
	funcIndex funcIndex     // moduledata.findfunctab: where a PC lookup starts
	valid     validFuncs    // functab entries whose records have been checked
	lines     lineCache     // decoded line tables of the functions looked up
	mem       *addrspace.Space

	foundBy struct{ pclntab, moduledata string }

	names, files *strtab
	version      string // from build info; "" if none
	modinfo      string // module information from build info; "" if none
	hasBuildInfo bool   // the binary holds a build-info blob
	wrapper      wrapperCache

	byName    nameIndex    // built by the first LookupFunction(s)
	byInlined inlinedIndex // built by the first LookupFunction that finds nothing
	byLine    lineIndex    // built by the first LinePCs

	lastError atomic.Pointer[FormatError] // see Function.formatError

	// views is, for an open view (openview.go), the number of functab
	// entries it holds; 0 for a Table.
	views uint64
	// open holds what NewTable reads with copyData; nil once it returns.
	open *openBuf

	closer io.Closer // the object, when Open made the table
	closed atomic.Bool
}

// Open opens the named executable (with object.Open) and reads its Go
// symbol table. Errors name the file: "gosym: /bin/ls: no Go symbol table
// (looked for ...); found: ..." says what was looked for and what was
// found instead.
func Open(name string) (*Table, error) {
	f, err := object.Open(name)
	if err != nil {
		return nil, fmt.Errorf("gosym: %w", err)
	}
	t, err := NewTable(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("gosym: %s: %w", name, err)
	}
	t.closer = f
	return t, nil
}

// NewTable reads the Go symbol table of obj. It finds the pclntab (by
// section, by symbol, or by scanning the loadable data for a valid header),
// the build info and, for Go 1.18 and later, the moduledata that gives the
// text base and the funcdata base. Its work does not depend on the number
// of functions. An object without a Go symbol table gets ErrNoTable; an
// inconsistent one a *FormatError, which wraps ErrCorrupted; an object
// whose sections cannot be read an error that wraps both ErrCorrupted and
// the object's own error (fs.ErrClosed, for a closed object, instead).
//
// The Table reads obj's section data for as long as it is in use; obj
// must stay valid that long.
func NewTable(obj object.Object) (*Table, error) {
	b := getOpenBuf()
	defer putOpenBuf(b)
	b.view = nil
	t, err := locate(obj, b)
	if err != nil {
		return nil, err
	}
	defer func() { t.open = nil }()
	// The checks that read the functab and records, through open views
	// where they can (openview.go).
	if err := t.validate(); err != nil {
		return nil, err
	}
	if t.hdr.nfunc > 0 {
		if err := t.checkFirstRecord(b); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// locate is NewTable without its checks of the records (validate and
// checkRecord): it finds the pclntab, its header, the build info and the
// moduledata, and reads them (with copyData) and the first and last
// functab entries, but nothing else of the table. It reads them into b,
// which the Table keeps as t.open.
func locate(obj object.Object, b *openBuf) (*Table, error) {
	secs, err := obj.Sections()
	if err != nil {
		return nil, objectError(err)
	}
	mem := addrspace.FromObject(obj, secs)
	data, addr, foundBy, err := findPclntab(obj, secs, mem)
	if err != nil {
		return nil, err
	}
	// The header is read with objfile.CopyData, as everything else Open
	// reads once (Table.copyData).
	h, err := parseHeaderFrom(b.head[:objfile.CopyData(obj, b.head[:], data)], data)
	if err != nil {
		return nil, err
	}
	t := &Table{obj: obj, hdr: h, data: data, addr: addr, mem: mem, open: b}
	t.SetLineCacheLimit(defaultLineCacheLimit(len(data)))
	t.foundBy.pclntab = foundBy
	t.version, t.modinfo = buildinfo.Read(obj, secs, mem, b.blob[:])
	t.hasBuildInfo = t.version != ""
	if t.version == "" {
		t.version = symbolVersion(obj, mem)
	}
	if t.version == "" && h.magic == magic12 {
		// Before Go 1.13 there is no build info; without symbols the
		// version string is found in the data.
		t.version = buildinfo.ScanVersion(obj, secs, addr, uint64(len(data)), 2, 12)
	}
	minor := parseMinor(t.version)
	lo, hi := minorRange(h.magic)
	t.wrapper.known = minor >= lo && minor <= hi
	if !t.wrapper.known {
		minor = t.guessMinor()
	}
	t.layout = layoutFor(h.magic, minor, h.rd.ptrSize)
	if h.magic == magic12 {
		t.names = newStrtab(data) // names and paths both live in the table
		t.files = t.names
	} else {
		t.names = newStrtab(h.names)
		t.files = newStrtab(h.filetab)
	}
	if h.magic == magic118 || h.magic == magic120 {
		if err := t.findModuledata(obj, secs); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Close marks the table closed. After it, every lookup (the methods of
// Table and Function that return an error or yield one: ResolveFunction,
// ResolveLocations, Functions, LookupFunction, LookupFunctions, LinePCs,
// Unwind, and Function's ResolveLocations, Lines, InlinedCalls,
// InlineFunctions and SPDelta) returns ErrClosed, which matches
// fs.ErrClosed as an os.File's errors after Close do, and Files yields
// nothing. What was read when the table was opened keeps answering:
// BuildInfo, Info, GoVersion, NumFunctions, and the getters of a Function
// obtained earlier (Name, Entry, End, File, ...), as does every string
// returned. For a Table made by Open, Close closes the object too, whose
// memory is released once nothing refers to the Table. Close of a Table
// made by NewTable does not close its Object. A second Close does nothing
// and returns nil.
func (t *Table) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	if t.closer != nil {
		return t.closer.Close()
	}
	return nil
}

// Object returns the object the table reads, for
// object.AddrOfFileOffset, build IDs or code bytes. A Table made by Open
// owns it: do not close it yourself.
func (t *Table) Object() object.Object { return t.obj }

// GoVersion returns the Go release that built the binary, such as
// "go1.26.8", as recorded in its build info (or, before Go 1.13, in
// runtime.buildVersion when the binary has symbols); "" if unknown.
func (t *Table) GoVersion() string { return t.version }

// NumFunctions returns the number of entries of the function table, an
// upper bound on the number of functions Functions yields.
func (t *Table) NumFunctions() int { return int(t.hdr.nfunc) }

// copyData copies src, bytes of the table's object (a slice of its
// section data: the pclntab, what t.mem maps), into dst, as the built-in
// copy does. NewTable reads what it reads once through it (the header,
// the moduledata, functab entries, the records and inline trees it
// checks), so that for a File made by object.Open they are read with
// pread rather than through the fresh mapping, where each page read costs
// a page fault (objfile.CopyData; BENCHMARKS.md, "Big binaries"). The
// Table keeps slices of the mapping for lookups.
func (t *Table) copyData(dst, src []byte) int { return objfile.CopyData(t.obj, dst, src) }
