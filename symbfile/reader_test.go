package symbfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/alloctest"
)

// pb builds protobuf messages for tests, with its own encoding.
type pb []byte

func (p pb) tag(field, wire int) pb { return binary.AppendUvarint(p, uint64(field<<3|wire)) }
func (p pb) u(field int, v uint64) pb {
	return binary.AppendUvarint(p.tag(field, 0), v)
}
func (p pb) s(field int, v int64) pb { return p.u(field, uint64(v<<1^v>>63)) }
func (p pb) str(field int, v string) pb {
	return append(binary.AppendUvarint(p.tag(field, 2), uint64(len(v))), v...)
}
func (p pb) msg(field int, m pb) pb { return p.str(field, string(m)) }
func (p pb) packed(field int, vs ...uint64) pb {
	var m []byte
	for _, v := range vs {
		m = binary.AppendUvarint(m, v)
	}
	return p.str(field, string(m))
}

// symbfileOf frames messages, each a type and a body, after the magic and
// an empty header.
func symbfileOf(msgs ...any) []byte {
	out := append([]byte("symbfile"), 0, 1)
	for i := 0; i < len(msgs); i += 2 {
		body := msgs[i+1].(pb)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = binary.AppendUvarint(out, uint64(msgs[i].(int)))
		out = append(out, body...)
	}
	return out
}

// othersFile is a file as other writers may make it, with what Write
// never does: the example of the format's own documentation (main,
// strdup inlined into it, malloc and strcpy into strdup, which overlap at
// depth 2, puts and free), strings in place and by reference, a second
// string table that replaces the first, unpacked repeated fields, unknown
// fields and message types, an absolute address after relative ones, a
// negative delta, an explicit empty call file, a line table with a hole,
// and return pads.
func othersFile() []byte {
	return symbfileOf(
		mtStringTable, pb{}.str(1, "main").str(1, "/home/bob/main.c").str(1, "/lib/glibc/io.c"),
		mtRangeV1, pb{}.u(rSetVA, 0x1000).u(rLength, 0x210).u(rFuncRef, 0).u(rFileRef, 1).
			msg(rLineTable, pb{}.packed(ltOffset, 0, 0x110).packed(ltLine, 5, 9)),
		mtRangeV1, pb{}.s(rDeltaVA, 0xa).u(rLength, 0x100).str(rFuncStr, "strdup").str(rFileStr, "/lib/glibc/sdup.c").
			u(rCallLine, 6).u(rDepth, 1).u(99, 7).
			msg(rLineTable, pb{}.u(ltOffset, 0).u(ltOffset, 0x80).u(ltLine, 20).u(ltLine, 21)),
		mtRangeV1, pb{}.s(rDeltaVA, 6).u(rLength, 0x81).str(rFuncStr, "malloc").str(rFileStr, "/lib/glibc/mm.c").
			u(rCallLine, 1234).u(rDepth, 2).str(rCallFileStr, "/lib/glibc/sdup.h"),
		mtRangeV1, pb{}.s(rDeltaVA, 0).u(rLength, 0x73).str(rFuncStr, "strcpy").str(rFileStr, "/lib/glibc/scpy.c").
			u(rCallLine, 1240).u(rDepth, 2).msg(rLineTable, pb{}.packed(ltOffset, 0x10).packed(ltLine, 77)),
		42, pb{}.u(1, 1),
		mtStringTable, pb{}.str(1, "/lib/glibc/io.c").str(1, "").str(1, "main").str(1, "free").str(1, "/home/bob/main.c"),
		mtRangeV1, pb{}.u(rSetVA, 0x117c).u(rLength, 0x6a).u(rFuncRef, 3).u(rFileRef, 0).u(rCallLine, 8).u(rDepth, 1).
			str(rCallFileStr, ""),
		mtRangeV1, pb{}.s(rDeltaVA, -0x6c).u(rLength, 0x84).str(rFuncStr, "puts").u(rFileRef, 0).u(rCallLine, 7).u(rDepth, 1).
			u(rCallFileRef, 4),
		mtReturnPadV1, pb{}.u(pSetVA, 0x2004).packed(pFunc, 2, 3).packed(pFile, 4, 1).packed(pLine, 12, 0),
		mtReturnPadV1, pb{}.s(pDeltaVA, 0x10).u(pFunc, 3).u(pFile, 0).u(pLine, 3),
	)
}

func TestReadOthers(t *testing.T) {
	r := newReader(t, othersFile())
	if r.NumRanges() != 6 || r.NumReturnPads() != 2 {
		t.Errorf("%d ranges, %d return pads; want 6, 2", r.NumRanges(), r.NumReturnPads())
	}
	loc := func(fn, file string, line uint32) gosym.Location {
		return gosym.Location{Function: fn, File: file, Line: line}
	}
	for _, c := range []struct {
		addr uint64
		want []gosym.Location
	}{
		{0x1000, []gosym.Location{loc("main", "/home/bob/main.c", 5)}},
		{0x1009, []gosym.Location{loc("main", "/home/bob/main.c", 5)}},
		// strdup's line table starts at its start; the call file of
		// strdup is left out: main's file.
		{0x100a, []gosym.Location{loc("strdup", "/lib/glibc/sdup.c", 20), loc("main", "/home/bob/main.c", 6)}},
		// strcpy, the shorter of the two depth-2 ranges at 0x1010, is
		// the innermost; its line table has a hole before 0x1020.
		{0x1010, []gosym.Location{loc("strcpy", "/lib/glibc/scpy.c", 0), loc("strdup", "/lib/glibc/sdup.c", 1240), loc("main", "/home/bob/main.c", 6)}},
		{0x1020, []gosym.Location{loc("strcpy", "/lib/glibc/scpy.c", 77), loc("strdup", "/lib/glibc/sdup.c", 1240), loc("main", "/home/bob/main.c", 6)}},
		// After strcpy, malloc (with its own call file).
		{0x1083, []gosym.Location{loc("malloc", "/lib/glibc/mm.c", 0), loc("strdup", "/lib/glibc/sdup.h", 1234), loc("main", "/home/bob/main.c", 6)}},
		{0x1091, []gosym.Location{loc("strdup", "/lib/glibc/sdup.c", 21), loc("main", "/home/bob/main.c", 6)}},
		{0x110a, []gosym.Location{loc("main", "/home/bob/main.c", 5)}},
		{0x1110, []gosym.Location{loc("puts", "/lib/glibc/io.c", 0), loc("main", "/home/bob/main.c", 7)}},
		// free's call file is given, empty.
		{0x117c, []gosym.Location{loc("free", "/lib/glibc/io.c", 0), loc("main", "", 8)}},
		{0x120f, []gosym.Location{loc("main", "/home/bob/main.c", 9)}},
		// Return pads, where no range is.
		{0x2004, []gosym.Location{loc("free", "", 0), loc("main", "/home/bob/main.c", 12)}},
		{0x2014, []gosym.Location{loc("free", "/lib/glibc/io.c", 3)}},
	} {
		got, err := r.Lookup(c.addr, nil)
		if err != nil || !sameFrames(got, c.want) {
			t.Errorf("Lookup(%#x) = %v, %v\nwant %v", c.addr, got, err, c.want)
		}
	}
	for _, addr := range []uint64{0, 0xfff, 0x1210, 0x2005, 0x2013, ^uint64(0)} {
		if got, err := r.Lookup(addr, nil); !errors.Is(err, gosym.ErrPCNotFound) || len(got) != 0 {
			t.Errorf("Lookup(%#x) = %v, %v; want ErrPCNotFound", addr, got, err)
		}
	}
}

// TestHostile checks that damaged files give errors that wrap
// ErrCorrupted and gosym.ErrCorrupted and say what is wrong.
func TestHostile(t *testing.T) {
	rng := pb{}.u(rSetVA, 0x1000).u(rLength, 0x10).str(rFuncStr, "f")
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "magic"},
		{"bad magic", []byte("symbfilX\x00\x01"), "magic"},
		{"no header", []byte("symbfile"), "no header"},
		{"range first", symbfileOf()[:8], "no header"},
		{"not a header first", append([]byte("symbfile"), 0, 2), "not a header"},
		{"length cut off", append(symbfileOf(), 0x80), "length cut off"},
		{"type cut off", append(symbfileOf(), 0x01, 0x80), "type cut off"},
		{"past the end", append(symbfileOf(), 0x10, 2, 1), "past the end"},
		{"huge", append(symbfileOf(), 0x80, 0x80, 0x80, 0x80, 0x01, 2), "more than"},
		{"second header", symbfileOf(mtHeader, pb{}), "type 1"},
		{"invalid type", symbfileOf(0, pb{}), "type 0"},
		{"group", symbfileOf(mtRangeV1, pb{}.tag(1, 3)), "damaged field"},
		{"field 0", symbfileOf(mtRangeV1, pb{}.u(0, 1)), "damaged field"},
		{"wrong wire type", symbfileOf(mtRangeV1, pb{}.str(rLength, "x")), "wire type"},
		{"relative first", symbfileOf(mtRangeV1, pb{}.s(rDeltaVA, 4).str(rFuncStr, "f")), "relative address"},
		{"no address", symbfileOf(mtRangeV1, pb{}.str(rFuncStr, "f")), "without an address"},
		{"no function", symbfileOf(mtRangeV1, pb{}.u(rSetVA, 1)), "without a function"},
		{"bad reference", symbfileOf(mtStringTable, pb{}.str(1, "a"), mtRangeV1, pb{}.u(rSetVA, 1).u(rFuncRef, 1)), "string 1 of a table of 1"},
		{"reference without table", symbfileOf(mtRangeV1, pb{}.u(rSetVA, 1).u(rFuncRef, 0)), "string 0 of a table of 0"},
		{"line columns", symbfileOf(mtRangeV1, rng.msg(rLineTable, pb{}.packed(ltOffset, 1, 2).packed(ltLine, 3))), "2 offsets and 1 lines"},
		{"damaged packed", symbfileOf(mtRangeV1, rng.msg(rLineTable, pb{}.str(ltOffset, "\x80"))), "line table column"},
		{"pad columns", symbfileOf(mtStringTable, pb{}.str(1, "a"), mtReturnPadV1, pb{}.u(pSetVA, 1).packed(pFunc, 0, 0).packed(pFile, 0).packed(pLine, 1, 2)), "2 functions, 1 files"},
		{"pad reference", symbfileOf(mtReturnPadV1, pb{}.u(pSetVA, 1).packed(pFunc, 0).packed(pFile, 0).packed(pLine, 1)), "string 0 of a table of 0"},
		{"pad without address", symbfileOf(mtReturnPadV1, pb{}), "without an address"},
		{"string of wire type 0", symbfileOf(mtStringTable, pb{}.u(1, 5)), "wire type"},
		{"cut range", symbfileOf(mtRangeV1, rng)[:len(symbfileOf(mtRangeV1, rng))-1], "past the end"},
	} {
		_, err := NewReader(c.data)
		if !errors.Is(err, ErrCorrupted) || !errors.Is(err, gosym.ErrCorrupted) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: NewReader: %v; want ErrCorrupted saying %q", c.name, err, c.want)
		}
	}
}

// TestDeepChain reads ranges nested 10,000 deep at one address, and a
// file of depths with gaps: Lookup stops at the first missing depth.
func TestDeepChain(t *testing.T) {
	var msgs []any
	for d := range 10000 {
		msgs = append(msgs, mtRangeV1, pb{}.u(rSetVA, 0x1000).u(rLength, 0x10).str(rFuncStr, "f").u(rDepth, uint64(d)))
	}
	msgs = append(msgs, mtRangeV1, pb{}.u(rSetVA, 0x1000).u(rLength, 0x10).str(rFuncStr, "g").u(rDepth, 1<<32-1))
	r := newReader(t, symbfileOf(msgs...))
	got, err := r.Lookup(0x1008, nil)
	if err != nil || len(got) != 10000 {
		t.Errorf("Lookup: %d frames, %v; want 10000", len(got), err)
	}
}

// TestNewReaderMemory checks that NewReader allocates in proportion to
// the file's size, whatever its fields claim.
func TestNewReaderMemory(t *testing.T) {
	for _, data := range [][]byte{
		othersFile(),
		writeBytes(t, selfTable(t)),
		symbfileOf(mtRangeV1, pb{}.u(rSetVA, 0).u(rLength, 1<<63).str(rFuncStr, "f").u(rDepth, 1<<31).u(rCallLine, 1<<40)),
	} {
		n := alloctest.Bytes(func() {
			if _, err := NewReader(data); err != nil {
				t.Fatal(err)
			}
		})
		if limit := 32*uint64(len(data)) + 64<<10; n > limit {
			t.Errorf("NewReader of %d bytes allocates %d, more than %d", len(data), n, limit)
		}
	}
}

func TestLookupAllocs(t *testing.T) {
	tab := selfTable(t)
	fns := functions(t, tab)
	ranges := newReader(t, writeBytes(t, tab))
	pads := newReader(t, writeBytes(t, tab, WithReturnPads(true)))
	var pcs, padPCs []uint64
	for i, f := range fns {
		if i%64 == 0 {
			pcs = append(pcs, f.Entry(), (f.Entry()+f.End())/2)
		}
	}
	for i := 0; i < len(pads.pads); i += 97 {
		padPCs = append(padPCs, pads.pads[i].va)
	}
	buf := make([]gosym.Location, 0, 64)
	for _, c := range []struct {
		r   *Reader
		pcs []uint64
	}{{ranges, pcs}, {pads, padPCs}} {
		n := testing.AllocsPerRun(10, func() {
			for _, pc := range c.pcs {
				var err error
				if buf, err = c.r.Lookup(pc, buf); err != nil {
					t.Fatal(err)
				}
			}
		})
		if n != 0 {
			t.Errorf("Lookup allocates %v times per %d lookups", n, len(c.pcs))
		}
	}
}

func TestClosed(t *testing.T) {
	r := newReader(t, othersFile())
	got, err := r.Lookup(0x1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := r.Lookup(0x1000, nil); !errors.Is(err, ErrClosed) || !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Lookup after Close: %v; want ErrClosed", err)
	}
	if got[0].Function != "main" || r.Close() != nil {
		t.Errorf("after Close: %v", got)
	}
}

// TestConcurrentLookups looks up from several goroutines at once (run
// with -race).
func TestConcurrentLookups(t *testing.T) {
	tab := selfTable(t)
	r := newReader(t, writeBytes(t, tab))
	fns := functions(t, tab)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []gosym.Location
			for i := g; i < len(fns); i += 16 {
				var err error
				if buf, err = r.Lookup(fns[i].Entry(), buf); err != nil || buf[len(buf)-1].Function != fns[i].Name() {
					t.Errorf("Lookup(%#x) = %v, %v", fns[i].Entry(), buf, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestDeterministic writes the same binary twice, from two Tables.
func TestDeterministic(t *testing.T) {
	for _, pads := range []bool{false, true} {
		a := writeBytes(t, selfTable(t), WithReturnPads(pads))
		b := writeBytes(t, selfTable(t), WithReturnPads(pads))
		if !bytes.Equal(a, b) {
			t.Errorf("WithReturnPads(%v): two files differ", pads)
		}
	}
}
