//go:build js || wasip1
// +build js wasip1

package main

// The self-report of the corpus's test program built for WebAssembly
// (GOOS=js or wasip1, GOARCH=wasm): gosym's TestWasmSelfReport copies it
// into the program (replacing args_other.go) and runs the module under
// Node.js or wazero. It prints the format of selfreport_linux.go (see
// testdata/corpus/README.md), over the Go wasm PCs: function i of the
// module has entry PC (0x1000+i)<<16, or from Go 1.28 1<<63 | i<<16, and
// the low 16 bits number its resume points. The runtime says which: the
// first PC is the one of the two where FuncForPC finds a function entry. Function extents come from the runtime: the range ends at
// the first PC_F without a function, and in each function the resume
// points are asked about until 64 in a row have no line (no frame, or an
// innermost frame at line 0). PCs without a line are left out, as in
// selfreport_linux.go. (Func.FileLine cannot tell: of a PC in inlined code
// FuncForPC returns the inlined function, whose FileLine is its call
// site.)

import (
	"runtime"
	"syscall"
)

func selfReportRequested() bool { return true }

type out struct{ buf []byte }

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
		if err == syscall.EAGAIN || err == syscall.EINTR {
			// wazero may give the module a non-blocking pipe.
			runtime.Gosched()
			continue
		}
		if err != nil || n <= 0 {
			panic("selfreport: write failed: " + err.Error())
		}
		o.buf = o.buf[n:]
	}
	o.buf = o.buf[:0]
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

// firstPCs are the entry PCs of a module's first function: up to Go 1.27
// its PC_F is 0x1000 + index, from Go 1.28 it is the index and bit 63 is
// set in every PC.
var firstPCs = [...]uint64{0x1000 << 16, 1 << 63}

//go:noinline
func selfReport() {
	var lo uint64
	for _, pc := range firstPCs {
		if fn := runtime.FuncForPC(uintptr(pc)); fn != nil && uint64(fn.Entry()) == pc {
			lo = pc
		}
	}
	if lo == 0 {
		panic("selfreport: no function at either first wasm PC")
	}
	hi := lo
	for {
		fn := runtime.FuncForPC(uintptr(hi))
		if fn == nil || uint64(fn.Entry()) != hi {
			break
		}
		hi += 1 << 16
	}
	if hi == lo {
		panic("selfreport: no function at the first wasm PC")
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
	o.str("\nbounds lines\nslide 0\nrecords\n")

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
	gap := func(a uint64) {
		if state != 1 {
			rec(a)
			o.str("\n")
			state = 1
		}
	}
	for entry := lo; entry < hi; entry += 1 << 16 {
		misses := 0
		var a uint64
		for a = entry; a < entry+1<<16 && misses < 64; a++ {
			cur = reportFrames(uintptr(a), cur[:0])
			if len(cur) == 0 || cur[0].line <= 0 {
				misses++
				gap(a)
				continue
			}
			misses = 0
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
		if a < entry+1<<16 {
			gap(a)
		}
	}
	o.str("end ")
	o.dec(records)
	o.str("\n")
	o.flush()
}
