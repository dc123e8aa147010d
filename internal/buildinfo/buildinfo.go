// Package buildinfo reads the Go version that the linker records in an
// executable's build-info blob (Go 1.13 and later), the way debug/buildinfo
// does, over an already opened object and without loading anything else.
package buildinfo

import (
	"bytes"
	"encoding/binary"

	"github.com/gosym-dev/gosym/internal/addrspace"
	"github.com/gosym-dev/gosym/object"
)

var magic = []byte("\xff Go buildinf:")

const headerSize = 32

// Version returns the Go version recorded in obj ("go1.21.5"), or "" when
// obj has no build info. A WebAssembly module has none; its "producers"
// section names the release. mem resolves the pointers of the pre-1.18 format.
func Version(obj object.Object, secs []object.SectionHeader, mem *addrspace.Space) string {
	for _, i := range candidates(secs) {
		data, err := obj.SectionData(i)
		if err != nil {
			continue
		}
		if v := scan(data, mem); v != "" {
			return v
		}
	}
	return producersVersion(obj, secs)
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
func scan(data []byte, mem *addrspace.Space) string {
	for off := 0; ; {
		i := bytes.Index(data[off:], magic)
		if i < 0 {
			return ""
		}
		off += i
		if off%16 == 0 && len(data)-off >= headerSize {
			return decode(data[off:], mem)
		}
		off++
	}
}

func decode(b []byte, mem *addrspace.Space) string {
	ptrSize, flags := int(b[14]), b[15]
	if flags&2 != 0 { // 1.18+: inline strings
		n, k := binary.Uvarint(b[headerSize:])
		if k <= 0 || n > uint64(len(b)-headerSize-k) {
			return ""
		}
		return string(b[headerSize+k : headerSize+k+int(n)])
	}
	if ptrSize != 4 && ptrSize != 8 {
		return ""
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
	// versPtr points to a Go string header {data, len}.
	hdr := mem.Slice(readPtr(b[16:]), uint64(2*ptrSize))
	if hdr == nil {
		return ""
	}
	return String(mem, readPtr(hdr), readPtr(hdr[ptrSize:]))
}

// String reads a Go string of n bytes at addr, or "" if it is not mapped
// or implausibly long for a version.
func String(mem *addrspace.Space, addr, n uint64) string {
	if n > 1024 {
		return ""
	}
	b := mem.Slice(addr, n)
	if b == nil {
		return ""
	}
	return string(b)
}
