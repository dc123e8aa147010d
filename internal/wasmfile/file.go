// Package wasmfile decodes WebAssembly modules for package object and
// package wasmobj, which documents what it presents (see
// objfile.Decoder).
package wasmfile

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// Magic is the first four bytes of a WebAssembly module, "\x00asm",
// read big-endian; the version, 1, follows in four little-endian bytes.
const Magic = 0x0061736d

// FuncValueOffset is what the Go linker up to Go 1.27 adds to a
// function's index among the module's own functions (imports not counted)
// to make the function's PC_F; its entry PC is PC_F<<16
// (cmd/link/internal/wasm). The call_indirect table's element segment
// starts at this index.
const FuncValueOffset = 0x1000

// PCHighBit is set in every PC of a module linked by Go 1.28 or later,
// whose PC_F is the function's index (no FuncValueOffset): its entry PC is
// PCHighBit | index<<16. Its element segment starts at index 0.
const PCHighBit = 1 << 63

// Section ids of the binary format, and their names.
const (
	idCustom   = 0
	idImport   = 2
	idFunction = 3
	idElement  = 9
	idCode     = 10
	idData     = 11
)

var sectionNames = [...]string{"custom", "type", "import", "function", "table", "memory",
	"global", "export", "start", "element", "code", "data", "datacount", "tag"}

// MemoryName is the name of the section that presents the linear memory
// the data segments initialize.
const MemoryName = "linear memory"

// memoryAlign is the alignment of the memory image's start: offsets in it
// are aligned as the addresses are, up to 16.
const memoryAlign = 16

// maxMemoryFactor bounds the linear memory image: its span (from the
// lowest to the highest byte a data segment initializes) may be at most
// this many times the file's size, plus maxMemorySlack. The Go linker
// leaves out runs of zeros of 8 bytes or more, so a span larger than the
// file means data that is mostly zeros; the bound keeps a few offsets in a
// hostile file from making a huge allocation.
const (
	maxMemoryFactor = 64
	maxMemorySlack  = 1 << 20
)

// File is a WebAssembly module decoded for package object: an
// [objfile.Decoder]. A File is safe for concurrent use.
type File struct {
	data    []byte
	secs    objfile.SectionTable // the module's sections, then the memory
	segs    []segment            // the active data segments, in file order
	memLo   uint64               // the memory image's address
	memSize uint64               // and size
	nimport uint64               // imported functions
	nfunc   uint64               // functions defined in the module
	names   []byte               // the "name" section's payload, or nil
	pc0     uint64               // the entry PC of the first defined function (entryPC)

	memOnce sync.Once
	mem     []byte // the memory image, built on first use

	syms objfile.SymbolMap
}

// segment is an active data segment: its bytes go to memory at addr.
type segment struct {
	addr uint64
	data []byte
}

// formatError reports damage in the file; see objfile.FormatErrorf.
func formatError(format string, args ...any) error {
	return objfile.FormatErrorf("wasm", -1, format, args...)
}

// NewBytes decodes the WebAssembly module in data. It reads the section
// headers, the import, function and data sections' entry headers and the
// name section's position; the memory image is assembled on first use.
func NewBytes(data []byte) (*File, error) {
	if len(data) < 8 || binary.BigEndian.Uint32(data) != Magic {
		return nil, formatError("not a WebAssembly module")
	}
	if v := binary.LittleEndian.Uint32(data[4:]); v != 1 {
		return nil, formatError("binary format version %d, want 1", v)
	}
	f := &File{data: data, secs: objfile.SectionTable{Format: "wasm", Data: data}, pc0: FuncValueOffset << 16}
	r := reader{data: data, off: 8}
	for r.off < uint64(len(data)) {
		start := r.off
		id := r.byte()
		size := r.uleb()
		payload := r.bytes(size)
		if r.err != nil {
			return nil, formatError("section at %#x: %v", start, r.err)
		}
		off := r.off - size
		h := objfile.SectionHeader{Offset: off, Size: size, FileSize: size}
		switch {
		case id == idCustom:
			pr := reader{data: payload}
			name := pr.name()
			if pr.err != nil {
				return nil, formatError("custom section at %#x: %v", start, pr.err)
			}
			// The section's bytes are what follows the name.
			h.Name = name
			h.Offset += pr.off
			h.Size -= pr.off
			h.FileSize -= pr.off
			if name == "name" {
				f.names = payload[pr.off:]
			}
		case int(id) < len(sectionNames):
			h.Name = sectionNames[id]
		default:
			return nil, formatError("unknown section id %d at %#x", id, start)
		}
		var err error
		switch id {
		case idImport:
			f.nimport, err = countFuncImports(payload)
		case idFunction:
			pr := reader{data: payload}
			f.nfunc, err = pr.uleb(), pr.err
		case idElement:
			f.pc0 = entryPC(payload)
		case idCode:
			h.Flags = objfile.SectionExec
		case idData:
			f.segs, err = dataSegments(payload, off)
		}
		if err != nil {
			return nil, formatError("%s section at %#x: %v", h.Name, start, err)
		}
		f.secs.Headers = append(f.secs.Headers, h)
	}
	if err := f.placeMemory(); err != nil {
		return nil, err
	}
	return f, nil
}

// entryPC returns the entry PC of the module's first defined function,
// as the Go linker numbers functions, from the element section's payload:
// the linker writes one active segment for table 0 that maps the table
// index PC_F to the function, so its offset is the first function's PC_F:
// FuncValueOffset up to Go 1.27, 0 from Go 1.28, whose PCs have
// PCHighBit set. Any other section (a module of another toolchain) gives
// the older rule.
func entryPC(payload []byte) uint64 {
	r := reader{data: payload}
	if n := r.uleb(); n == 0 || r.err != nil {
		return FuncValueOffset << 16
	}
	if flags := r.uleb(); flags != 0 || r.err != nil {
		return FuncValueOffset << 16
	}
	if off, ok := r.constExpr(); ok && off == 0 {
		return PCHighBit
	}
	return FuncValueOffset << 16
}

// placeMemory sets the span of the memory image and adds its section.
func (f *File) placeMemory() error {
	if len(f.segs) == 0 {
		return nil
	}
	lo, hi := f.segs[0].addr, f.segs[0].addr
	for _, s := range f.segs {
		lo = min(lo, s.addr)
		hi = max(hi, s.addr+uint64(len(s.data)))
	}
	lo &^= memoryAlign - 1
	if hi-lo > maxMemoryFactor*uint64(len(f.data))+maxMemorySlack {
		return formatError("data segments span %#x bytes of memory, too many for a file of %#x bytes", hi-lo, len(f.data))
	}
	f.memLo, f.memSize = lo, hi-lo
	f.secs.Headers = append(f.secs.Headers, objfile.SectionHeader{
		Name: MemoryName, Addr: lo, Size: hi - lo, FileSize: hi - lo,
		Flags: objfile.SectionAlloc | objfile.SectionWrite,
	})
	return nil
}

// countFuncImports returns how many of the imports are functions.
func countFuncImports(payload []byte) (uint64, error) {
	r := reader{data: payload}
	n := r.uleb()
	var funcs uint64
	for i := uint64(0); i < n && r.err == nil; i++ {
		r.name() // module
		r.name() // field
		switch kind := r.byte(); kind {
		case 0: // function: type index
			r.uleb()
			funcs++
		case 1: // table: reference type, limits
			r.byte()
			r.limits()
		case 2: // memory: limits
			r.limits()
		case 3: // global: value type, mutability
			r.byte()
			r.byte()
		case 4: // tag: attribute, type index
			r.byte()
			r.uleb()
		default:
			return 0, fmt.Errorf("import %d of unknown kind %d", i, kind)
		}
	}
	return funcs, r.err
}

// dataSegments returns the active data segments of memory 0 whose offset
// is a constant (i32.const): the only kind the Go linker writes. Passive
// segments and others are skipped. base is the payload's file offset.
func dataSegments(payload []byte, base uint64) ([]segment, error) {
	r := reader{data: payload}
	n := r.uleb()
	if n > uint64(len(payload))/2 { // a segment takes 2 bytes at least (passive, empty)
		return nil, fmt.Errorf("%d data segments in %d bytes", n, len(payload))
	}
	segs := make([]segment, 0, min(n, 1024)) // grown by what is there
	for i := uint64(0); i < n && r.err == nil; i++ {
		flags := r.uleb()
		var addr int64
		active := flags == 0 || flags == 2
		if flags == 2 {
			active = r.uleb() == 0 // memory index
		}
		if flags == 0 || flags == 2 {
			var ok bool
			addr, ok = r.constExpr()
			active = active && ok
		} else if flags != 1 {
			return nil, fmt.Errorf("data segment %d has flags %d", i, flags)
		}
		size := r.uleb()
		b := r.bytes(size)
		if r.err == nil && active && len(b) > 0 {
			segs = append(segs, segment{uint64(uint32(addr)), b})
		}
	}
	return segs, r.err
}

// Endian returns binary.LittleEndian: WebAssembly memory is little-endian.
func (f *File) Endian() binary.ByteOrder { return binary.LittleEndian }

// Sections returns the module's sections in file order, then the linear
// memory. The caller may modify the returned slice.
func (f *File) Sections() ([]objfile.SectionHeader, error) { return f.secs.Sections() }

// SectionData returns the payload of section i, a subslice of the bytes
// given to NewBytes, which must not be modified; for the memory section,
// the memory image, assembled once.
func (f *File) SectionData(i int) ([]byte, error) {
	if f.memSize > 0 && i == len(f.secs.Headers)-1 {
		f.memOnce.Do(f.buildMemory)
		return f.mem, nil
	}
	return f.secs.SectionData(i)
}

// buildMemory assembles the memory image: the segments at their offsets,
// zeros between them. A later segment overwrites an earlier one, as when
// the module is instantiated.
func (f *File) buildMemory() {
	f.mem = make([]byte, f.memSize)
	for _, s := range f.segs {
		copy(f.mem[s.addr-f.memLo:], s.data)
	}
}

// Format returns "wasm".
func (f *File) Format() string { return "wasm" }

// Arch returns "wasm".
func (f *File) Arch() string { return "wasm" }
