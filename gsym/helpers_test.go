package gsym

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/tabletest"
)

// The helpers the export formats' tests share (internal/tabletest).
var (
	openTable  = tabletest.Open
	selfTable  = tabletest.Self
	functions  = tabletest.Functions
	sameFrames = tabletest.SameFrames
	entryTable = tabletest.Entry
)

// toolBinary returns the path of a binary of the installed toolchain
// ("go", or a tool such as "compile"), as "go env" names its directories.
func toolBinary(tb testing.TB, name string) string {
	tb.Helper()
	out, err := exec.Command("go", "env", "GOROOT", "GOTOOLDIR").Output()
	if err != nil {
		tb.Skipf("no go command: %v", err)
	}
	dirs := strings.Fields(string(out))
	path := filepath.Join(dirs[0], "bin", name)
	if name != "go" {
		path = filepath.Join(dirs[1], name)
	}
	if _, err := os.Stat(path); err != nil {
		tb.Skipf("no %s in the installed toolchain", name)
	}
	return path
}

// writeBytes writes tab as a GSYM file in memory.
func writeBytes(tb testing.TB, tab *gosym.Table) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, tab); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// newReader opens data.
func newReader(tb testing.TB, data []byte) *Reader {
	tb.Helper()
	r, err := NewReader(data)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// samplePCs returns every function's entry and about n more PCs spread
// evenly over the functions' PCs, sorted, each once.
func samplePCs(fns []gosym.Function, n int) []uint64 {
	var total uint64
	for _, f := range fns {
		total += f.End() - f.Entry()
	}
	step := max(total/uint64(max(n, 1)), 1)
	var pcs []uint64
	var k uint64 // PCs seen so far
	for _, f := range fns {
		pcs = append(pcs, f.Entry())
		size := f.End() - f.Entry()
		// The sampled PCs in [k, k+size): multiples of step, plus 7 so
		// that they are not all aligned.
		for s := (k + step - 1) / step * step; s < k+size; s += step {
			if pc := f.Entry() + (s-k+7)%size; pc != f.Entry() {
				pcs = append(pcs, pc)
			}
		}
		k += size
	}
	return pcs
}

// A synthetic GSYM file, written without Write, for hostile inputs and
// fuzz seeds: one function per synthFunc, the given files.
type synthFunc struct {
	addr, size uint64
	name       string
	lines      []byte // encoded line table; nil: none
	inline     []byte // encoded inline tree; nil: none
}

// synth encodes a GSYM file in byte order o with the given functions
// (sorted by address) and files (directory, base name); the string table
// holds "" and then every name, directory and base name, in order, and
// strOff maps each to its offset.
func synth(o endian, funcs []synthFunc, files [][2]string) (data []byte, strOff map[string]uint32) {
	strs := []byte{0}
	strOff = map[string]uint32{"": 0}
	str := func(s string) uint32 {
		if off, ok := strOff[s]; ok {
			return off
		}
		strOff[s] = uint32(len(strs))
		strs = append(append(strs, s...), 0)
		return strOff[s]
	}
	for _, f := range funcs {
		str(f.name)
	}
	fileTab := [][2]uint32{{0, 0}}
	for _, f := range files {
		fileTab = append(fileTab, [2]uint32{str(f[0]), str(f[1])})
	}
	n := len(funcs)
	base := uint64(0)
	if n > 0 {
		base = funcs[0].addr
	}
	strOffset := headerSize + 8*n + 4*n + 4 + 8*len(fileTab)
	fiStart := (strOffset + len(strs) + 3) &^ 3
	var fis []byte
	var infos []uint32
	for _, f := range funcs {
		for len(fis)%4 != 0 {
			fis = append(fis, 0)
		}
		infos = append(infos, uint32(fiStart+len(fis)))
		fis = o.AppendUint32(fis, uint32(f.size))
		fis = o.AppendUint32(fis, str(f.name))
		if f.lines != nil {
			fis = o.AppendUint32(fis, infoLines)
			fis = o.AppendUint32(fis, uint32(len(f.lines)))
			fis = append(fis, f.lines...)
		}
		if f.inline != nil {
			fis = o.AppendUint32(fis, infoInline)
			fis = o.AppendUint32(fis, uint32(len(f.inline)))
			fis = append(fis, f.inline...)
		}
		fis = o.AppendUint32(fis, infoEnd)
		fis = o.AppendUint32(fis, 0)
	}
	var out []byte
	out = o.AppendUint32(out, magic)
	out = o.AppendUint16(out, version)
	out = append(out, 8, 0)
	out = o.AppendUint64(out, base)
	out = o.AppendUint32(out, uint32(n))
	out = o.AppendUint32(out, uint32(strOffset))
	out = o.AppendUint32(out, uint32(len(strs)))
	out = append(out, make([]byte, maxUUID)...)
	for _, f := range funcs {
		out = o.AppendUint64(out, f.addr-base)
	}
	for _, off := range infos {
		out = o.AppendUint32(out, off)
	}
	out = o.AppendUint32(out, uint32(len(fileTab)))
	for _, f := range fileTab {
		out = o.AppendUint32(o.AppendUint32(out, f[0]), f[1])
	}
	out = append(out, strs...)
	out = append(out, make([]byte, fiStart-len(out))...)
	return append(out, fis...), strOff
}

// enc builds LEB128-encoded data: uint64 values as ULEB, int64 as SLEB,
// bytes and uint32 (4 bytes, little-endian) as they are.
func enc(vals ...any) []byte {
	var out []byte
	for _, v := range vals {
		switch v := v.(type) {
		case uint64:
			out = binary.AppendUvarint(out, v)
		case int:
			out = binary.AppendUvarint(out, uint64(v))
		case int64:
			for {
				c := byte(v & 0x7f)
				v >>= 7
				if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
					out = append(out, c)
					break
				}
				out = append(out, c|0x80)
			}
		case byte:
			out = append(out, v)
		case uint32:
			out = binary.LittleEndian.AppendUint32(out, v)
		case []byte:
			out = append(out, v...)
		default:
			panic("enc: bad value")
		}
	}
	return out
}

// smallFile is a synthetic file of two functions in byte order o: f at
// 0x1000 (0x40 bytes) with a line table in two files and an inline tree
// two deep (g inlined at f.go:11, h into g at g.go:21), and k at 0x1040
// without line table.
func smallFile(o endian) []byte {
	// Files: 1 dir/f.go, 2 dir/g.go, 3 h.go.
	lines := enc(int64(-2), int64(5), 10, // min delta, max delta, first line
		byte(opFirstSpec+2),                                                         // 0x1000 line 10
		byte(opSetFile), 2, byte(opAdvanceLine), int64(10), byte(opAdvancePC), 0x10, // 0x1010 g.go:20
		byte(opSetFile), 3, byte(opAdvanceLine), int64(10), byte(opAdvancePC), 0x8, // 0x1018 h.go:30
		byte(opSetFile), 1, byte(opAdvanceLine), int64(-18), byte(opAdvancePC), 0x10, // 0x1028 f.go:12
		byte(opEnd))
	// Names are resolved after synth lays out the strings: build once to
	// learn the offsets, then again with the tree.
	funcs := []synthFunc{
		{addr: 0x1000, size: 0x40, name: "f", lines: lines},
		{addr: 0x1040, size: 0x10, name: "k"},
	}
	files := [][2]string{{"dir", "f.go"}, {"dir", "g.go"}, {"", "h.go"}, {"", "g"}, {"", "h"}}
	_, off := synth(o, funcs, files)
	u32 := func(v uint32) []byte { return o.AppendUint32(nil, v) }
	funcs[0].inline = enc(
		1, 0, 0x40, byte(1), u32(off["f"]), 0, 0, // root [0x1000, 0x1040)
		1, 0x10, 0x18, byte(1), u32(off["g"]), 1, 11, // g [0x1010, 0x1028) called at f.go:11
		1, 0x8, 0x10, byte(0), u32(off["h"]), 2, 21, // h [0x1018, 0x1028) called at g.go:21
		0, // end of g's children
		0) // end of the root's children
	data, _ := synth(o, funcs, files)
	return data
}

// isCorrupt reports whether err wraps both ErrCorrupted and
// gosym.ErrCorrupted.
func isCorrupt(err error) bool {
	return errors.Is(err, ErrCorrupted) && errors.Is(err, gosym.ErrCorrupted)
}
