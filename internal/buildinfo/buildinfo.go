// Package buildinfo reads the Go version that the linker records in an
// executable's build-info blob (Go 1.13 and later), the way debug/buildinfo
// does, over an already opened object and without loading anything else.
package buildinfo

import (
	"bytes"
	"encoding/binary"

	"github.com/gosym-dev/gosym/internal/addrspace"
	"github.com/gosym-dev/gosym/internal/objfile"
	"github.com/gosym-dev/gosym/object"
)

var magic = []byte("\xff Go buildinf:")

const headerSize = 32

// Version returns the Go version recorded in obj ("go1.21.5"), or "" when
// obj has no build info. mem resolves the pointers of the pre-1.18 format.
func Version(obj object.Object, secs []object.SectionHeader, mem *addrspace.Space) string {
	v, _ := Read(obj, secs, mem, nil)
	return v
}

// Read returns the Go version and the module information recorded in obj,
// as debug/buildinfo reads them: mod is the text runtime/debug parses
// (without the sentinels that bracket it in the binary), "" when the
// binary was built outside a module. Both are "" when obj has no build
// info, but for a WebAssembly module, which has none: its "producers"
// section names the release (and no module). The strings are copies: they
// stay valid after obj is closed.
//
// A candidate section that fits in buf (the dedicated section: the blob
// with its strings inline, in Go 1.18 and later) is read into it with
// objfile.CopyData, with pread for a File made by object.Open, rather
// than through the fresh mapping, where each page read costs a page
// fault; buf may be nil.
func Read(obj object.Object, secs []object.SectionHeader, mem *addrspace.Space, buf []byte) (vers, mod string) {
	for _, i := range candidates(secs) {
		data, err := obj.SectionData(i)
		if err != nil {
			continue
		}
		if len(data) <= len(buf) {
			data = buf[:objfile.CopyData(obj, buf[:], data)]
		}
		if vers, mod = scan(data, mem); vers != "" {
			return vers, mod
		}
	}
	return producersVersion(obj, secs), ""
}

// candidates returns the sections that may hold the blob: the dedicated
// section where the format has one, else the writable data sections in
// order (the linkers put the blob at the start of the first one, but a
// position-independent ELF file without section headers has a writable
// relro segment before it).
func candidates(secs []object.SectionHeader) []int {
	for i, s := range secs {
		if s.Name == ".go.buildinfo" || s.Name == "__go_buildinfo" {
			return []int{i}
		}
	}
	var idx []int
	for i, s := range secs {
		if s.Flags&object.SectionWrite != 0 && s.Flags&object.SectionExec == 0 && s.FileSize > 0 {
			idx = append(idx, i)
		}
	}
	return idx
}

// scan finds the blob at a 16-byte aligned offset of data and decodes it.
func scan(data []byte, mem *addrspace.Space) (vers, mod string) {
	for off := 0; ; {
		i := bytes.Index(data[off:], magic)
		if i < 0 {
			return "", ""
		}
		off += i
		if off%16 == 0 && len(data)-off >= headerSize {
			return decode(data[off:], mem)
		}
		off++
	}
}

// maxModInfo bounds the module information read through a pointer (the
// pre-1.18 format): large programs record a few hundred kilobytes.
const maxModInfo = 16 << 20

func decode(b []byte, mem *addrspace.Space) (vers, mod string) {
	ptrSize, flags := int(b[14]), b[15]
	if flags&2 != 0 { // 1.18+: two strings inline, each after its varint length
		rest := b[headerSize:]
		v, rest, ok := inlineString(rest)
		if !ok {
			return "", ""
		}
		m, _, _ := inlineString(rest)
		return string(v), trimModInfo(string(m))
	}
	if ptrSize != 4 && ptrSize != 8 {
		return "", ""
	}
	var order binary.ByteOrder = binary.LittleEndian
	if flags&1 != 0 {
		order = binary.BigEndian
	}
	readPtr := func(b []byte) uint64 {
		if ptrSize == 4 {
			return uint64(order.Uint32(b))
		}
		return order.Uint64(b)
	}
	// The header holds two pointers, to runtime.buildVersion and to
	// runtime.modinfo; each points to a Go string header {data, len}.
	str := func(ptr []byte, limit uint64) string {
		hdr := mem.Slice(readPtr(ptr), uint64(2*ptrSize))
		if hdr == nil {
			return ""
		}
		n := readPtr(hdr[ptrSize:])
		if n > limit {
			return ""
		}
		return String(mem, readPtr(hdr), n, limit)
	}
	vers = str(b[16:], 1024)
	if vers == "" {
		return "", ""
	}
	return vers, trimModInfo(str(b[16+ptrSize:], maxModInfo))
}

// inlineString reads a string stored as a uvarint length and its bytes.
func inlineString(b []byte) (s, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

// trimModInfo removes the 16-byte sentinels the go command puts around
// the module information (so that it can be found in a binary), as
// debug/buildinfo does.
func trimModInfo(mod string) string {
	if len(mod) >= 33 && mod[len(mod)-17] == '\n' {
		return mod[16 : len(mod)-16]
	}
	return ""
}

// String reads a Go string of n bytes at addr, or "" if it is not mapped
// or longer than limit.
func String(mem *addrspace.Space, addr, n, limit uint64) string {
	if n > limit {
		return ""
	}
	b := mem.Slice(addr, n)
	if b == nil {
		return ""
	}
	return string(b)
}
