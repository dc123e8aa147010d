//go:build linux
// +build linux

package main

// The self-report: run as "gosymtest -selfreport", the program prints
// what its runtime says about every PC of its own text. The format is
// documented in testdata/corpus/README.md; in short:
//
//	gosym-selfreport 1
//	method <callersframes-full|callersframes-innermost|callersframes-physical|funcforpc>
//	goversion <runtime.Version()>
//	goarch <runtime.GOARCH>
//	range <hex start> <hex end>   scanned [start,end), link-time addresses
//	bounds <symbols|lines>        how padding between functions was found
//	slide <hex>                   load address minus link-time address
//	records
//	=<id>	<function>	<file>     defines a (function, file) pair
//	+<hex delta>[	<id>:<line>]...  frames at pc, innermost first
//	+<hex delta>	-                the runtime returned no frame at pc
//	+<hex delta>                   pc not queried (a gap)
//	end <number of records>
//
// A record's pc is the previous record's pc (the range start for the
// first record) plus its delta; it holds up to the next record's pc.
//
// Only syscall and runtime are used (no os, no debug/elf) to keep the
// binaries small; the ELF reader below handles just what is needed.

import (
	"runtime"
	"syscall"
)

func readFile(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var data []byte
	buf := make([]byte, 1<<16)
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		data = append(data, buf[:n]...)
	}
	return data, nil
}

func selfReportRequested() bool {
	b, err := readFile("/proc/self/cmdline")
	if err != nil {
		return false
	}
	var args []string
	start := 0
	for i := 0; i < len(b); i++ {
		if b[i] == 0 {
			args = append(args, string(b[start:i]))
			start = i + 1
		}
	}
	if start < len(b) {
		args = append(args, string(b[start:]))
	}
	seed = len(args)
	return len(args) == 2 && args[1] == "-selfreport"
}

// elfFile is the little of an ELF file the self-report needs.
type elfFile struct {
	data   []byte
	big    bool // big-endian
	is64   bool
	shoff  uint64
	shsize int
	shnum  int
	shstr  int
}

func (f *elfFile) u16(off uint64) uint64 {
	b := f.data[off : off+2]
	if f.big {
		return uint64(b[0])<<8 | uint64(b[1])
	}
	return uint64(b[1])<<8 | uint64(b[0])
}

func (f *elfFile) u32(off uint64) uint64 {
	if f.big {
		return f.u16(off)<<16 | f.u16(off+2)
	}
	return f.u16(off+2)<<16 | f.u16(off)
}

func (f *elfFile) u64(off uint64) uint64 {
	if f.big {
		return f.u32(off)<<32 | f.u32(off+4)
	}
	return f.u32(off+4)<<32 | f.u32(off)
}

func (f *elfFile) word(off uint64) uint64 {
	if f.is64 {
		return f.u64(off)
	}
	return f.u32(off)
}

func parseELF(data []byte) *elfFile {
	if len(data) < 64 || data[0] != 0x7f || data[1] != 'E' || data[2] != 'L' || data[3] != 'F' {
		return nil
	}
	f := &elfFile{data: data, is64: data[4] == 2, big: data[5] == 2}
	if f.is64 {
		f.shoff = f.u64(0x28)
		f.shsize = int(f.u16(0x3a))
		f.shnum = int(f.u16(0x3c))
		f.shstr = int(f.u16(0x3e))
	} else {
		f.shoff = f.u32(0x20)
		f.shsize = int(f.u16(0x2e))
		f.shnum = int(f.u16(0x30))
		f.shstr = int(f.u16(0x32))
	}
	if f.shoff == 0 || f.shoff+uint64(f.shnum*f.shsize) > uint64(len(data)) {
		return nil
	}
	return f
}

// section returns type, addr, offset, size, link and entsize of section i.
func (f *elfFile) section(i int) (typ, addr, off, size, link, entsize uint64) {
	h := f.shoff + uint64(i*f.shsize)
	typ = f.u32(h + 4)
	if f.is64 {
		return typ, f.u64(h + 16), f.u64(h + 24), f.u64(h + 32), f.u32(h + 40), f.u64(h + 56)
	}
	return typ, f.u32(h + 12), f.u32(h + 16), f.u32(h + 20), f.u32(h + 24), f.u32(h + 36)
}

func (f *elfFile) cstring(off uint64) string {
	end := off
	for end < uint64(len(f.data)) && f.data[end] != 0 {
		end++
	}
	return string(f.data[off:end])
}

func (f *elfFile) sectionName(i int) string {
	_, _, stroff, _, _, _ := f.section(f.shstr)
	h := f.shoff + uint64(i*f.shsize)
	return f.cstring(stroff + f.u32(h))
}

// elfSym is a symbol: name, value, size and ELF type.
type elfSym struct {
	name        string
	value, size uint64
	typ         byte
}

func (f *elfFile) symbols() []elfSym {
	var syms []elfSym
	for i := 0; i < f.shnum; i++ {
		typ, _, off, size, link, entsize := f.section(i)
		if typ != 2 { // SHT_SYMTAB
			continue
		}
		_, _, stroff, _, _, _ := f.section(int(link))
		if entsize == 0 {
			continue
		}
		for p := off; p+entsize <= off+size; p += entsize {
			var s elfSym
			if f.is64 {
				s.name = f.cstring(stroff + f.u32(p))
				s.typ = f.data[p+4] & 0xf
				s.value = f.u64(p + 8)
				s.size = f.u64(p + 16)
			} else {
				s.name = f.cstring(stroff + f.u32(p))
				s.value = f.u32(p + 4)
				s.size = f.u32(p + 8)
				s.typ = f.data[p+12] & 0xf
			}
			syms = append(syms, s)
		}
	}
	return syms
}

// out buffers the report and writes it to standard output.
type out struct {
	buf []byte
}

func (o *out) str(s string) {
	o.buf = append(o.buf, s...)
	if len(o.buf) >= 1<<16 {
		o.flush()
	}
}

func (o *out) hex(v uint64) {
	var b [16]byte
	i := len(b)
	for {
		i--
		b[i] = "0123456789abcdef"[v&15]
		v >>= 4
		if v == 0 {
			break
		}
	}
	o.buf = append(o.buf, b[i:]...)
}

func (o *out) dec(v int) {
	if v < 0 {
		o.buf = append(o.buf, '-')
		v = -v
	}
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	o.buf = append(o.buf, b[i:]...)
}

func (o *out) flush() {
	for len(o.buf) > 0 {
		n, err := syscall.Write(1, o.buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			panic("selfreport: write failed")
		}
		o.buf = o.buf[n:]
	}
	o.buf = o.buf[:0]
}

func fail(msg string) {
	syscall.Write(2, []byte("selfreport: "+msg+"\n"))
	syscall.Exit(2)
}

func sameFrames(a, b []frame) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

//go:noinline
func selfReport() {
	data, err := readFile("/proc/self/exe")
	if err != nil {
		fail("cannot read /proc/self/exe: " + err.Error())
	}
	f := parseELF(data)
	if f == nil {
		fail("not an ELF file with section headers")
	}

	// The range: runtime.text..runtime.etext (text..etext before Go 1.5)
	// when symbols exist, else the .text section.
	var lo, hi uint64
	for i := 0; i < f.shnum; i++ {
		if f.sectionName(i) == ".text" {
			_, addr, _, size, _, _ := f.section(i)
			lo, hi = addr, addr+size
		}
	}
	syms := f.symbols()
	var symLo, symHi uint64
	for i := 0; i < len(syms); i++ {
		switch syms[i].name {
		case "runtime.text", "text":
			symLo = syms[i].value
		case "runtime.etext", "etext":
			symHi = syms[i].value
		}
	}
	if symLo != 0 && symHi > symLo {
		lo, hi = symLo, symHi
	}
	if hi <= lo {
		fail("no text range")
	}

	// The slide between link-time and run-time addresses (PIE), from a
	// function whose symbol and run-time entry are both known.
	var slide uint64
	pc0, _, _, _ := runtime.Caller(0)
	if fn := runtime.FuncForPC(pc0); fn != nil {
		name := fn.Name()
		for i := 0; i < len(syms); i++ {
			if syms[i].name == name && syms[i].typ == 2 {
				slide = uint64(fn.Entry()) - syms[i].value
			}
		}
	}

	// Function extents from symbol sizes, to skip the padding between
	// functions (where some releases' runtime throws on lookups).
	var covered []bool
	for i := 0; i < len(syms); i++ {
		s := syms[i]
		if s.typ != 2 || s.size == 0 || s.value < lo || s.value >= hi {
			continue
		}
		if covered == nil {
			covered = make([]bool, hi-lo)
		}
		end := s.value + s.size
		if end > hi {
			end = hi
		}
		for a := s.value; a < end; a++ {
			covered[a-lo] = true
		}
	}

	o := &out{}
	o.str("gosym-selfreport 1\nmethod ")
	o.str(reportMethod)
	o.str("\ngoversion ")
	o.str(runtime.Version())
	o.str("\ngoarch ")
	o.str(runtime.GOARCH)
	o.str("\nrange ")
	o.hex(lo)
	o.str(" ")
	o.hex(hi)
	o.str("\nbounds ")
	if covered != nil {
		o.str("symbols")
	} else {
		o.str("lines")
	}
	o.str("\nslide ")
	o.hex(slide)
	o.str("\nrecords\n")

	ids := make(map[string]int)
	var prev, cur []frame
	records := 0
	last := lo
	rec := func(a uint64) {
		o.str("+")
		o.hex(a - last)
		last = a
		records++
	}
	state := 0 // 0 start, 1 gap, 2 frames
	fn := runtime.FuncForPC(uintptr(lo + slide))
	for a := lo; a < hi; a++ {
		pc := uintptr(a + slide)
		var next *runtime.Func
		if a+1 < hi {
			// Not at hi: Go 1.5's findfunc indexes out of range at etext.
			next = runtime.FuncForPC(pc + 1)
		}
		query := fn != nil && next != nil && next.Entry() == fn.Entry()
		if query && covered != nil && !covered[a-lo] {
			query = false
		}
		if query {
			if _, line := fn.FileLine(pc); line == 0 {
				query = false
			}
		}
		fn = next
		if !query {
			if state != 1 {
				rec(a)
				o.str("\n")
				state = 1
			}
			continue
		}
		cur = reportFrames(pc, cur[:0])
		if state == 2 && sameFrames(cur, prev) {
			continue
		}
		for i := 0; i < len(cur); i++ {
			key := cur[i].function + "\t" + cur[i].file
			if _, ok := ids[key]; !ok {
				ids[key] = len(ids)
				o.str("=")
				o.dec(ids[key])
				o.str("\t")
				o.str(key)
				o.str("\n")
			}
		}
		rec(a)
		if len(cur) == 0 {
			o.str("\t-")
		}
		for i := 0; i < len(cur); i++ {
			o.str("\t")
			o.dec(ids[cur[i].function+"\t"+cur[i].file])
			o.str(":")
			o.dec(cur[i].line)
		}
		o.str("\n")
		state = 2
		prev, cur = cur, prev
	}
	o.str("end ")
	o.dec(records)
	o.str("\n")
	o.flush()
}
