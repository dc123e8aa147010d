package symbfile

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"github.com/gosym-dev/gosym/internal/corpussample"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// The oracle: protoc, with the message definitions of
// testdata/symbfile.proto (which mirrors OpenTelemetry's), decodes every
// message of our files; this file reads protoc's text output as the
// proto's comments define the records, independently of Reader, and
// compares what that gives with gosym's ResolveLocations.

// protoc returns the path of protoc, or skips the test when it is missing,
// except under GOSYM_HEAVY=1 (CI installs Debian's protobuf-compiler),
// where a missing protoc fails the test.
func protoc(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("protoc")
	if err != nil {
		if os.Getenv("GOSYM_HEAVY") == "1" {
			t.Fatalf("protoc is missing (GOSYM_HEAVY=1 needs it: apt-get install protobuf-compiler): %v", err)
		}
		t.Skipf("protoc is missing (apt-get install protobuf-compiler): %v", err)
	}
	return path
}

// oracleMessage is one message of a file: its type and body.
type oracleMessage struct {
	typ  uint64
	body []byte
}

// splitMessages cuts a symbfile into its messages, with its own varint
// reading.
func splitMessages(t *testing.T, data []byte) []oracleMessage {
	t.Helper()
	if !bytes.HasPrefix(data, []byte("symbfile")) {
		t.Fatalf("no magic: % x", data[:min(len(data), 8)])
	}
	var msgs []oracleMessage
	p := data[8:]
	for len(p) > 0 {
		size, n := binary.Uvarint(p)
		if n <= 0 {
			t.Fatalf("bad length at %d", len(data)-len(p))
		}
		typ, m := binary.Uvarint(p[n:])
		if m <= 0 || uint64(len(p)-n-m) < size {
			t.Fatalf("bad message at %d", len(data)-len(p))
		}
		msgs = append(msgs, oracleMessage{typ, p[n+m : n+m+int(size)]})
		p = p[n+m+int(size):]
	}
	return msgs
}

// decodeAll runs protoc --decode=oracle.Messages over every message of
// data, each wrapped as the field of its type (testdata/oracle.proto), and
// returns protoc's text.
func decodeAll(t *testing.T, data []byte) string {
	t.Helper()
	var wrapped []byte
	for _, m := range splitMessages(t, data) {
		inner := binary.AppendUvarint(binary.AppendUvarint(nil, m.typ<<3|2), uint64(len(m.body)))
		inner = append(inner, m.body...)
		wrapped = binary.AppendUvarint(append(wrapped, 1<<3|2), uint64(len(inner)))
		wrapped = append(wrapped, inner...)
	}
	return runProtoc(t, wrapped, "oracle.Messages", "oracle.proto")
}

// runProtoc runs protoc --decode=msg -I testdata file with in on its
// standard input.
func runProtoc(t *testing.T, in []byte, msg, file string) string {
	t.Helper()
	cmd := exec.Command(protoc(t), "--decode="+msg, "-I", "testdata", file)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("protoc --decode=%s: %v\n%s", msg, err, stderr.Bytes())
	}
	return string(out)
}

// oracleRange and oraclePad are the records as the proto defines them,
// with absolute addresses, strings resolved and line tables summed.
type oracleRange struct {
	va, length         uint64
	fn, file, callFile string
	hasFile, hasCall   bool
	callLine, depth    uint32
	offs, lines        []uint64
}

type oraclePad struct {
	va     uint64
	frames []gosym.Location // outermost first
}

// oracleFile is a file as read from protoc's text.
type oracleFile struct {
	ranges []oracleRange
	pads   []oraclePad
}

// parseText reads protoc's text format of oracle.Messages, line by line:
// "name {", "}", "name: value".
func parseText(t *testing.T, text string) oracleFile {
	t.Helper()
	var f oracleFile
	var table []string
	var prevVA uint64
	var path []string
	var cur map[string][]string // the fields of the message of the current record
	var lt map[string][]string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 64<<20)
	str := func(v string) string {
		s, err := unquoteC(v)
		if err != nil {
			t.Fatalf("string %s: %v", v, err)
		}
		return s
	}
	num := func(v string) uint64 {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("number %q: %v", v, err)
		}
		return n
	}
	ref := func(v string) string {
		i := num(v)
		if i >= uint64(len(table)) {
			t.Fatalf("reference %d in a table of %d", i, len(table))
		}
		return table[i]
	}
	va := func(m map[string][]string) uint64 {
		if d, ok := m["deltaElfVA"]; ok {
			n, err := strconv.ParseInt(d[0], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			prevVA += uint64(n)
		} else if s, ok := m["setElfVA"]; ok {
			prevVA = num(s[0])
		} else {
			t.Fatalf("record without an address: %v", m)
		}
		return prevVA
	}
	one := func(m map[string][]string, k string) (string, bool) {
		v, ok := m[k]
		if ok && len(v) != 1 {
			t.Fatalf("%s given %d times", k, len(v))
		}
		if !ok {
			return "", false
		}
		return v[0], true
	}
	strOf := func(m map[string][]string, name string) (string, bool) {
		if v, ok := one(m, name+"Str"); ok {
			return str(v), true
		}
		if v, ok := one(m, name+"Ref"); ok {
			return ref(v), true
		}
		return "", false
	}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasSuffix(line, " {"):
			name := strings.TrimSuffix(line, " {")
			path = append(path, name)
			switch name {
			case "range", "returnPad", "stringTable", "header":
				cur = map[string][]string{}
				if name == "stringTable" {
					table = table[:0]
				}
			case "lineTable":
				lt = map[string][]string{}
			}
		case line == "}":
			name := path[len(path)-1]
			path = path[:len(path)-1]
			switch name {
			case "range":
				r := oracleRange{va: va(cur)}
				if v, ok := one(cur, "length"); ok {
					r.length = num(v)
				}
				var ok bool
				if r.fn, ok = strOf(cur, "func"); !ok {
					t.Fatalf("range without a function: %v", cur)
				}
				r.file, r.hasFile = strOf(cur, "file")
				r.callFile, r.hasCall = strOf(cur, "callFile")
				if v, ok := one(cur, "callLine"); ok {
					r.callLine = uint32(num(v))
				}
				if v, ok := one(cur, "depth"); ok {
					r.depth = uint32(num(v))
				}
				if lt != nil {
					sum := uint64(0)
					for _, o := range lt["offset"] {
						sum += num(o)
						r.offs = append(r.offs, sum)
					}
					for _, l := range lt["lineNumber"] {
						r.lines = append(r.lines, num(l))
					}
					if len(r.offs) != len(r.lines) {
						t.Fatalf("line table of %d offsets and %d lines", len(r.offs), len(r.lines))
					}
				}
				lt = nil
				f.ranges = append(f.ranges, r)
			case "returnPad":
				p := oraclePad{va: va(cur)}
				fns, files, lines := cur["func"], cur["file"], cur["line"]
				if len(fns) != len(files) || len(fns) != len(lines) {
					t.Fatalf("return pad with columns of %d, %d, %d", len(fns), len(files), len(lines))
				}
				for i := range fns {
					p.frames = append(p.frames, gosym.Location{Function: ref(fns[i]), File: ref(files[i]), Line: uint32(num(lines[i]))})
				}
				f.pads = append(f.pads, p)
			case "stringTable":
				for _, s := range cur["strings"] {
					table = append(table, str(s))
				}
			}
		default:
			k, v, ok := strings.Cut(line, ": ")
			if !ok {
				t.Fatalf("protoc output line %q", line)
			}
			if len(path) > 0 && path[len(path)-1] == "lineTable" {
				lt[k] = append(lt[k], v)
			} else {
				cur[k] = append(cur[k], v)
			}
		}
	}
	return f
}

// unquoteC undoes the C-style escapes of protoc's text format: \n \r \t
// \" \' \\ and octal \ooo bytes.
func unquoteC(s string) (string, error) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", fmt.Errorf("not quoted")
	}
	s = s[1 : len(s)-1]
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		if i == len(s) {
			return "", fmt.Errorf("trailing backslash")
		}
		switch e := s[i]; e {
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case '"', '\'', '\\':
			b = append(b, e)
		default:
			if i+3 > len(s) {
				return "", fmt.Errorf("bad escape")
			}
			v, err := strconv.ParseUint(s[i:i+3], 8, 8)
			if err != nil {
				return "", err
			}
			b = append(b, byte(v))
			i += 2
		}
	}
	return string(b), nil
}

// oracleLookup gives the frames at pc from ranges, innermost first, as the
// proto defines them: the ranges that hold pc, ordered by depth (from 0,
// one per depth); each frame's function is its range's; the innermost
// frame's file is its range's, its line from the range's line table (the
// entry with the largest offset at most pc's; 0 before the first); every
// other frame's file and line are the call file and call line of the range
// one deeper, the call file being the frame's own range's file when left
// out. byDepth holds each depth's ranges sorted by address, which must not
// overlap.
func oracleLookup(byDepth [][]oracleRange, pc uint64) []gosym.Location {
	var chain []*oracleRange
	for _, rs := range byDepth {
		i, _ := slices.BinarySearchFunc(rs, pc+1, func(r oracleRange, x uint64) int {
			if r.va < x {
				return -1
			}
			return 1
		})
		if i == 0 || pc >= rs[i-1].va+rs[i-1].length {
			break
		}
		chain = append(chain, &rs[i-1])
	}
	var out []gosym.Location
	for d, r := range chain {
		loc := gosym.Location{Function: r.fn, File: r.file}
		if d+1 < len(chain) {
			c := chain[d+1]
			loc.Line = c.callLine
			if c.hasCall {
				loc.File = c.callFile
			}
		} else {
			for i, o := range r.offs {
				if r.va+o <= pc {
					loc.Line = uint32(r.lines[i])
				}
			}
		}
		out = append(out, loc)
	}
	slices.Reverse(out)
	return out
}

// byDepth sorts ranges by depth and address, checking that ranges of one
// depth do not overlap and have a length, and that depth-0 ranges carry
// no call site.
func byDepth(t *testing.T, ranges []oracleRange) [][]oracleRange {
	t.Helper()
	var out [][]oracleRange
	for _, r := range ranges {
		if r.length == 0 {
			t.Errorf("empty range %+v", r)
		}
		if r.depth == 0 && (r.callLine != 0 || r.hasCall) {
			t.Errorf("depth-0 range with a call site: %+v", r)
		}
		for int(r.depth) >= len(out) {
			out = append(out, nil)
		}
		out[r.depth] = append(out[r.depth], r)
	}
	for d, rs := range out {
		slices.SortFunc(rs, func(a, b oracleRange) int { return cmp.Compare(a.va, b.va) })
		for i := 1; i < len(rs); i++ {
			if rs[i].va < rs[i-1].va+rs[i-1].length {
				t.Fatalf("depth %d: ranges %s at %#x+%#x and %s at %#x overlap", d, rs[i-1].fn, rs[i-1].va, rs[i-1].length, rs[i].fn, rs[i].va)
			}
		}
	}
	return out
}

// checkOracleRanges decodes a file of ranges written for tab with protoc
// and checks, at every PC of every function, that the ranges give
// ResolveLocations' frames. It returns the number of PCs checked.
func checkOracleRanges(t *testing.T, tab *gosym.Table, data []byte) int {
	t.Helper()
	of := parseText(t, decodeAll(t, data))
	if len(of.pads) != 0 {
		t.Errorf("%d return pads in a file of ranges", len(of.pads))
	}
	bd := byDepth(t, of.ranges)
	checkTiling(t, tab, bd[0])
	var locs []gosym.Location
	var err error
	pcs, bad := 0, 0
	for _, f := range functions(t, tab) {
		for pc := f.Entry(); pc < f.End(); pc += pcStride {
			if locs, err = f.ResolveLocations(pc, locs); err != nil {
				t.Fatalf("%s pc %#x: %v", f.Name(), pc, err)
			}
			pcs++
			if got := oracleLookup(bd, pc); !sameFrames(got, locs) {
				if bad++; bad <= 10 {
					t.Errorf("pc %#x: the ranges as protoc decodes them give\n %v\nwant %v", pc, got, locs)
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d PCs disagree", bad, pcs)
	}
	return pcs
}

// checkOraclePads decodes a file of return pads written for tab with
// protoc and checks that every pad's frames, outermost first, are
// ResolveLocations' at its address (the address after a call, minus 1),
// and that Reader.Lookup gives them too. It returns the pads.
func checkOraclePads(t *testing.T, tab *gosym.Table, data []byte) []oraclePad {
	t.Helper()
	of := parseText(t, decodeAll(t, data))
	if len(of.ranges) != 0 {
		t.Errorf("%d ranges in a file of return pads", len(of.ranges))
	}
	r := newReader(t, data)
	var locs, got []gosym.Location
	var err error
	bad := 0
	for i, p := range of.pads {
		if i > 0 && p.va <= of.pads[i-1].va {
			t.Errorf("return pad at %#x after one at %#x", p.va, of.pads[i-1].va)
		}
		if locs, err = tab.ResolveLocations(p.va, locs); err != nil {
			t.Fatalf("return pad at %#x: %v", p.va, err)
		}
		want := slices.Clone(locs)
		slices.Reverse(want)
		if !sameFrames(p.frames, want) {
			if bad++; bad <= 10 {
				t.Errorf("return pad at %#x:\n got  %v\n want %v", p.va, p.frames, want)
			}
		}
		if got, err = r.Lookup(p.va, got); err != nil || !sameFrames(got, locs) {
			if bad++; bad <= 10 {
				t.Errorf("Lookup(%#x) = %v, %v; want %v", p.va, got, err, locs)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d return pads disagree", bad, len(of.pads))
	}
	return of.pads
}

// padArch reports whether Write finds the return pads of e's binaries.
func padArch(e testcorpus.Entry) bool { return slices.Contains(CallArchitectures, e.GOARCH) }

func TestOracleSelf(t *testing.T) {
	protoc(t)
	tab := selfTable(t)
	pcs := checkOracleRanges(t, tab, writeBytes(t, tab))
	pads := checkOraclePads(t, tab, writeBytes(t, tab, WithReturnPads(true)))
	t.Logf("test binary: %d PCs, %d return pads agree", pcs, len(pads))
}

func TestOracleCorpus(t *testing.T) {
	protoc(t)
	entries := corpussample.Test(t)
	for _, e := range entries {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			tab := entryTable(t, e)
			pcs := checkOracleRanges(t, tab, writeBytes(t, tab))
			if !padArch(e) {
				t.Logf("%s: %d PCs agree; no return pads for %s", e.Name, pcs, e.GOARCH)
				return
			}
			pads := checkOraclePads(t, tab, writeBytes(t, tab, WithReturnPads(true)))
			if len(pads) == 0 {
				t.Errorf("no return pads")
			}
			t.Logf("%s: %d PCs, %d return pads agree", e.Name, pcs, len(pads))
		})
	}
}

// TestProtocEachMessageType decodes the first message of every type of
// our files with the mirrored proto alone, as protoc --decode=symbfile.X
// -I testdata symbfile.proto, and checks that protoc prints what the
// message holds.
func TestProtocEachMessageType(t *testing.T) {
	protoc(t)
	tab := selfTable(t)
	names := map[uint64]string{mtHeader: "Header", mtRangeV1: "RangeV1", mtReturnPadV1: "ReturnPadV1", mtStringTable: "StringTableV1"}
	want := map[uint64]string{mtRangeV1: "setElfVA: ", mtReturnPadV1: "setElfVA: ", mtStringTable: "strings: "}
	seen := map[uint64]bool{}
	for _, pads := range []bool{false, true} {
		for _, m := range splitMessages(t, writeBytes(t, tab, WithReturnPads(pads))) {
			if seen[m.typ] {
				continue
			}
			seen[m.typ] = true
			name, ok := names[m.typ]
			if !ok {
				t.Fatalf("message of type %d", m.typ)
			}
			out := runProtoc(t, m.body, "symbfile."+name, "symbfile.proto")
			if !strings.Contains(out, want[m.typ]) {
				t.Errorf("protoc --decode=symbfile.%s: %q, want %q in it", name, out, want[m.typ])
			}
		}
	}
	if len(seen) != 4 {
		t.Errorf("message types seen: %v", seen)
	}
}

// checkTiling checks that the depth-0 ranges, sorted by address, tile
// every function exactly, with its name, and cover nothing else.
func checkTiling(t *testing.T, tab *gosym.Table, depth0 []oracleRange) {
	t.Helper()
	i := 0
	for _, f := range functions(t, tab) {
		for pc := f.Entry(); pc < f.End(); {
			if i == len(depth0) || depth0[i].va != pc || depth0[i].fn != f.Name() || depth0[i].va+depth0[i].length > f.End() {
				t.Fatalf("%s [%#x, %#x): no depth-0 range of it at %#x (next: %+v)", f.Name(), f.Entry(), f.End(), pc, depth0[min(i, len(depth0)-1)])
			}
			pc += depth0[i].length
			i++
		}
	}
	if i != len(depth0) {
		t.Errorf("%d depth-0 ranges outside the functions, from %+v", len(depth0)-i, depth0[i])
	}
}
