package objtest

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"testing"
)

// Mini returns a small file with the structure of the executable data, to
// seed fuzz targets (fuzzing a whole binary is slow, and mutations rarely
// hit the headers): the same headers, sections and segments, but at most
// 64 bytes of each section's contents, 32 symbols and 2 KiB of symbol
// names. It knows ELF, 64-bit little-endian Mach-O, PE, Plan 9 and 64-bit
// XCOFF files; of a WebAssembly module it keeps 64 bytes of the code, the
// first 32 data segments (64 bytes of each) and the first 32 function
// names.
func Mini(tb testing.TB, data []byte) []byte {
	tb.Helper()
	switch {
	case bytes.HasPrefix(data, []byte(elf.ELFMAG)):
		return miniELF(tb, data)
	case binary.LittleEndian.Uint32(data) == macho.Magic64:
		return miniMachO(data)
	case bytes.HasPrefix(data, []byte("MZ")):
		return miniPE(data)
	case binary.BigEndian.Uint16(data) == 0x01f7:
		return miniXCOFF(data)
	case bytes.HasPrefix(data, []byte("\x00asm")):
		return miniWasm(tb, data)
	case binary.BigEndian.Uint32(data)&^0x8000 < 0x1000:
		return miniPlan9(data)
	}
	tb.Fatal("Mini: unknown format")
	return nil
}

// appender appends blocks of data to out, aligned.
type appender struct {
	out   []byte
	align int
}

func (a *appender) add(b []byte) uint64 {
	for len(a.out)%a.align != 0 {
		a.out = append(a.out, 0)
	}
	off := len(a.out)
	a.out = append(a.out, b...)
	return uint64(off)
}

func miniELF(tb testing.TB, data []byte) []byte {
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	o := ef.ByteOrder
	is64 := ef.Class == elf.ELFCLASS64
	word := func(b []byte) uint64 {
		if is64 {
			return o.Uint64(b)
		}
		return uint64(o.Uint32(b))
	}
	put := func(b []byte, v uint64) {
		if is64 {
			o.PutUint64(b, v)
		} else {
			o.PutUint32(b, uint32(v))
		}
	}
	// Offsets of fields in the file, program and section headers.
	ehsize, phentsize, shentsize, phoffAt, shoffAt := 52, 32, 40, 28, 32
	pOff, pFilesz, sOff, sSize, symSize := 4, 16, 16, 20, uint64(16)
	if is64 {
		ehsize, phentsize, shentsize, phoffAt, shoffAt = 64, 56, 64, 32, 40
		pOff, pFilesz, sOff, sSize, symSize = 8, 32, 24, 32, 24
	}
	phoff, shoff := word(data[phoffAt:]), word(data[shoffAt:])
	a := &appender{out: bytes.Clone(data[:max(uint64(ehsize), phoff+uint64(len(ef.Progs)*phentsize))]), align: 8}
	for i, p := range ef.Progs {
		n := min(p.Filesz, 64)
		off := a.add(data[p.Off : p.Off+n])
		ph := a.out[phoff+uint64(i*phentsize):] // after add, which may move out
		put(ph[pOff:], off)
		put(ph[pFilesz:], n)
	}
	shstrndx := int(o.Uint16(data[ehsize-2:]))
	var headers []byte
	for i, s := range ef.Sections {
		h := bytes.Clone(data[shoff+uint64(i*shentsize) : shoff+uint64((i+1)*shentsize)])
		if s.Type != elf.SHT_NOBITS && s.Type != elf.SHT_NULL {
			n := min(s.FileSize, 64)
			switch {
			case i == shstrndx:
				n = s.FileSize
			case s.Type == elf.SHT_SYMTAB || s.Type == elf.SHT_DYNSYM:
				n = min(s.FileSize, 32*symSize)
			case s.Type == elf.SHT_STRTAB:
				n = min(s.FileSize, 2048)
			}
			put(h[sOff:], a.add(data[s.Offset:s.Offset+n]))
			put(h[sSize:], n)
		}
		headers = append(headers, h...)
	}
	off := a.add(headers)
	put(a.out[shoffAt:], off)
	return a.out
}

func miniMachO(data []byte) []byte {
	const hdrSize, segSize, sectSize, nlistSize = 32, 72, 80, 16
	le := binary.LittleEndian
	cmdsEnd := hdrSize + int(le.Uint32(data[20:]))
	a := &appender{out: bytes.Clone(data[:cmdsEnd]), align: 8}
	for off := hdrSize; off < cmdsEnd; {
		cmd, size := macho.LoadCmd(le.Uint32(a.out[off:])), int(le.Uint32(a.out[off+4:]))
		switch cmd {
		case macho.LoadCmdSegment64:
			for i := range int(le.Uint32(a.out[off+64:])) {
				s := off + segSize + i*sectSize
				size, offset := le.Uint64(a.out[s+40:]), uint64(le.Uint32(a.out[s+48:]))
				if offset == 0 {
					continue // zero-fill
				}
				n := min(size, 64)
				newOff := a.add(data[offset : offset+n])
				le.PutUint64(a.out[s+40:], n)
				le.PutUint32(a.out[s+48:], uint32(newOff))
			}
		case macho.LoadCmdSymtab:
			symoff, nsyms := le.Uint32(a.out[off+8:]), min(le.Uint32(a.out[off+12:]), 32)
			stroff, strsize := le.Uint32(a.out[off+16:]), min(le.Uint32(a.out[off+20:]), 2048)
			newSymoff := a.add(data[symoff : symoff+nsyms*nlistSize])
			newStroff := a.add(data[stroff : stroff+strsize])
			le.PutUint32(a.out[off+8:], uint32(newSymoff))
			le.PutUint32(a.out[off+12:], nsyms)
			le.PutUint32(a.out[off+16:], uint32(newStroff))
			le.PutUint32(a.out[off+20:], strsize)
		case macho.LoadCmdDysymtab:
			// Indexes into the full symbol table: drop them.
			clear(a.out[off+8 : off+size])
		}
		off += size
	}
	return a.out
}

func miniPE(data []byte) []byte {
	const fileHeaderSize, sectionHeaderSize, symSize = 20, 40, 18
	le := binary.LittleEndian
	fh := int(le.Uint32(data[0x3c:])) + 4
	nsect := int(le.Uint16(data[fh+2:]))
	symoff, nsyms := le.Uint32(data[fh+8:]), le.Uint32(data[fh+12:])
	sects := fh + fileHeaderSize + int(le.Uint16(data[fh+16:]))
	a := &appender{out: bytes.Clone(data[:sects+nsect*sectionHeaderSize]), align: 16}
	for i := range nsect {
		sh := sects + i*sectionHeaderSize
		size, off := le.Uint32(a.out[sh+16:]), le.Uint32(a.out[sh+20:])
		if off == 0 {
			continue
		}
		n := min(size, 64)
		newOff := a.add(data[off : off+n])
		le.PutUint32(a.out[sh+8:], min(le.Uint32(a.out[sh+8:]), n)) // VirtualSize
		le.PutUint32(a.out[sh+16:], n)
		le.PutUint32(a.out[sh+20:], uint32(newOff))
	}
	strtab := symoff + nsyms*symSize
	strsize := min(le.Uint32(data[strtab:]), 2048)
	newNsyms := min(nsyms, 32)
	newSymoff := a.add(data[symoff : symoff+newNsyms*symSize])
	a.out = append(a.out, data[strtab:strtab+strsize]...) // right after the symbols
	le.PutUint32(a.out[len(a.out)-int(strsize):], strsize)
	le.PutUint32(a.out[fh+8:], uint32(newSymoff))
	le.PutUint32(a.out[fh+12:], newNsyms)
	return a.out
}

func miniPlan9(data []byte) []byte {
	be := binary.BigEndian
	hdr, valueSize := 32, 4
	if be.Uint32(data)&0x8000 != 0 {
		hdr, valueSize = 40, 8
	}
	text, dat := int(be.Uint32(data[4:])), int(be.Uint32(data[8:]))
	syms := data[hdr+text+dat:]
	// Each entry: a value, a type byte, a NUL-terminated name (Go writes
	// no file-name entries, whose names are different).
	end := 0
	for range 32 {
		end += valueSize + 1 + bytes.IndexByte(syms[end+valueSize+1:], 0) + 1
	}
	out := bytes.Clone(data[:hdr+64])
	out = append(out, data[hdr+text:hdr+text+64]...)
	out = append(out, syms[:end]...)
	be.PutUint32(out[4:], 64)           // text
	be.PutUint32(out[8:], 64)           // data
	be.PutUint32(out[16:], uint32(end)) // syms
	return out
}

func miniXCOFF(data []byte) []byte {
	const fileHeaderSize, sectionHeaderSize, symSize = 24, 72, 18
	be := binary.BigEndian
	nsect := int(be.Uint16(data[2:]))
	symoff, nsyms := be.Uint64(data[8:]), be.Uint32(data[20:])
	sects := fileHeaderSize + int(be.Uint16(data[16:]))
	a := &appender{out: bytes.Clone(data[:sects+nsect*sectionHeaderSize]), align: 8}
	for i := range nsect {
		sh := sects + i*sectionHeaderSize
		size, off := be.Uint64(a.out[sh+24:]), be.Uint64(a.out[sh+32:])
		if off == 0 {
			continue
		}
		n := min(size, 64)
		be.PutUint64(a.out[sh+24:], n)
		be.PutUint64(a.out[sh+32:], a.add(data[off:off+n]))
	}
	// 32 symbols, each with its auxiliary entries, then the string table
	// cut to 2 KiB.
	end := uint64(0)
	for range 32 {
		end += symSize * (1 + uint64(data[symoff+end+17]))
	}
	n := min(uint32(end/symSize), nsyms)
	strtab := data[symoff+uint64(nsyms)*symSize:]
	strsize := min(be.Uint32(strtab), 2048)
	newSymoff := a.add(data[symoff : symoff+uint64(n)*symSize])
	a.out = append(a.out, strtab[:strsize]...)
	be.PutUint32(a.out[len(a.out)-int(strsize):], strsize)
	be.PutUint64(a.out[8:], newSymoff)
	be.PutUint32(a.out[20:], n)
	return a.out
}

// miniWasm rewrites the sections of a WebAssembly module, each after its
// id and size (LEB128).
func miniWasm(tb testing.TB, data []byte) []byte {
	out := bytes.Clone(data[:8])
	for off := 8; off < len(data); {
		id := data[off]
		size, n := binary.Uvarint(data[off+1:])
		body := data[off+1+n : off+1+n+int(size)]
		off += 1 + n + int(size)
		switch {
		case id == 10: // code: cut
			body = body[:min(len(body), 64)]
		case id == 11: // data: 32 segments of at most 64 bytes
			body = miniVec(body, 32, func(b []byte) (int, []byte) {
				// flags 0, i32.const offset, end, size, bytes
				k := 2
				for b[k]&0x80 != 0 {
					k++
				}
				k += 2
				sz, m := binary.Uvarint(b[k:])
				keep := min(sz, 64)
				e := binary.AppendUvarint(bytes.Clone(b[:k]), keep)
				return k + m + int(sz), append(e, b[k+m:k+m+int(keep)]...)
			})
		case id == 0 && bytes.HasPrefix(body, []byte("\x04name")): // 32 function names
			sub := body[5:]
			if sub[0] == 1 {
				_, m := binary.Uvarint(sub[1:])
				names := miniVec(sub[1+m:], 32, func(b []byte) (int, []byte) {
					_, i := binary.Uvarint(b)
					l, j := binary.Uvarint(b[i:])
					return i + j + int(l), b[:i+j+int(l)]
				})
				body = append(append([]byte("\x04name\x01"), binary.AppendUvarint(nil, uint64(len(names)))...), names...)
			}
		}
		out = append(out, id)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
	if len(out) > 16<<10 {
		tb.Fatalf("miniWasm: %d bytes", len(out))
	}
	return out
}

// miniVec keeps the first max elements of a vector (a LEB128 count, then
// the elements), each rewritten by elem, which returns its length in b
// and its new bytes.
func miniVec(b []byte, max uint64, elem func(b []byte) (int, []byte)) []byte {
	count, n := binary.Uvarint(b)
	b = b[n:]
	keep := min(count, max)
	var out []byte
	for range keep {
		l, e := elem(b)
		out = append(out, e...)
		b = b[l:]
	}
	return append(binary.AppendUvarint(nil, keep), out...)
}
