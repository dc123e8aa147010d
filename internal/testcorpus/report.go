package testcorpus

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Self-report methods: how the test program asked its runtime.
const (
	// MethodFull: runtime.CallersFrames, full inline stack per PC
	// (Go 1.9-1.11 and 1.23+).
	MethodFull = "callersframes-full"
	// MethodInnermost: runtime.CallersFrames, innermost frame only
	// (Go 1.12-1.22).
	MethodInnermost = "callersframes-innermost"
	// MethodPhysical: runtime.CallersFrames without inlining information
	// (Go 1.7-1.8).
	MethodPhysical = "callersframes-physical"
	// MethodFuncForPC: runtime.FuncForPC(pc).Name() and .FileLine(pc)
	// (before Go 1.7).
	MethodFuncForPC = "funcforpc"
)

// Report is a parsed self-report: what the runtime of a binary said
// about the PCs of its own text.
type Report struct {
	// Method is one of the Method constants.
	Method string
	// GoVersion is runtime.Version() and GOARCH runtime.GOARCH of the
	// reporting binary.
	GoVersion string
	GOARCH    string
	// Start and End delimit the scanned text, [Start, End), as link-time
	// addresses (runtime.text..runtime.etext, or the .text section).
	Start, End uint64
	// Bounds is "symbols" when padding between functions was found from
	// ELF symbol sizes, "lines" when only from FileLine returning line 0.
	Bounds string
	// Slide is the load address minus the link-time address (PIE).
	Slide uint64
	// Records are sorted by PC. Record i holds for PCs in
	// [Records[i].PC, Records[i+1].PC), the last one up to End.
	Records []Record
}

// Record is what the runtime reported for a run of PCs.
type Record struct {
	// PC is a link-time address.
	PC uint64
	// Gap is set for PCs the program did not ask about: the last byte
	// of each function, padding between functions, PCs without a
	// function or with line 0.
	Gap bool
	// Frames are the reported frames, innermost first. Empty without
	// Gap: the runtime returned no frame (e.g. runtime.skipPleaseUseCallersFrames
	// on Go 1.9-1.11).
	Frames []Frame
}

// Frame is one reported frame. Function names are as the runtime
// prints them (generic instantiations as "[...]" from Go 1.18 on).
type Frame struct {
	Function string
	File     string
	Line     int
}

// Lookup returns the record holding pc and whether pc lies in the
// report's range.
func (r *Report) Lookup(pc uint64) (Record, bool) {
	if pc < r.Start || pc >= r.End || len(r.Records) == 0 {
		return Record{}, false
	}
	i := sort.Search(len(r.Records), func(i int) bool { return r.Records[i].PC > pc }) - 1
	if i < 0 {
		return Record{}, false
	}
	return r.Records[i], true
}

// ParseReport parses a self-report (uncompressed), in format 1 (the
// program's output) or 2 (EncodeReport: how the corpus stores it).
func ParseReport(data []byte) (*Report, error) {
	if bytes.HasPrefix(data, []byte(format2+"\n")) {
		r, err := parseReport2(data)
		if err != nil {
			return nil, fmt.Errorf("format 2: %v", err)
		}
		return r, nil
	}
	r := &Report{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	lineNo := 0
	errf := func(format string, args ...interface{}) error {
		return fmt.Errorf("line %d: %s", lineNo, fmt.Sprintf(format, args...))
	}
	inRecords := false
	ended := false
	var pairs []Frame // id -> function, file
	pc := uint64(0)
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if lineNo == 1 {
			if line != "gosym-selfreport 1" {
				return nil, errf("bad first line %q", line)
			}
			continue
		}
		if ended {
			return nil, errf("data after end")
		}
		if !inRecords {
			key, val, _ := strings.Cut(line, " ")
			// Unknown header lines are allowed for later additions.
			if err := r.setHeader(key, val); err != nil {
				return nil, errf("%v", err)
			}
			if key == "records" {
				inRecords, pc = true, r.Start
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "="):
			f := strings.Split(line[1:], "\t")
			if len(f) != 3 {
				return nil, errf("bad definition")
			}
			id, err := strconv.Atoi(f[0])
			if err != nil || id != len(pairs) {
				return nil, errf("definition %q out of order", f[0])
			}
			pairs = append(pairs, Frame{Function: f[1], File: f[2]})
		case strings.HasPrefix(line, "+"):
			f := strings.Split(line[1:], "\t")
			d, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				return nil, errf("%v", err)
			}
			pc += d
			rec := Record{PC: pc}
			switch {
			case len(f) == 1:
				rec.Gap = true
			case len(f) == 2 && f[1] == "-":
				rec.Frames = []Frame{}
			default:
				for _, fr := range f[1:] {
					ids, lines, ok := strings.Cut(fr, ":")
					id, err1 := strconv.Atoi(ids)
					ln, err2 := strconv.Atoi(lines)
					if !ok || err1 != nil || err2 != nil || id < 0 || id >= len(pairs) {
						return nil, errf("bad frame %q", fr)
					}
					p := pairs[id]
					p.Line = ln
					rec.Frames = append(rec.Frames, p)
				}
			}
			if n := len(r.Records); n > 0 && r.Records[n-1].PC >= pc {
				return nil, errf("records not increasing")
			}
			r.Records = append(r.Records, rec)
		case strings.HasPrefix(line, "end "):
			n, err := strconv.Atoi(line[4:])
			if err != nil || n != len(r.Records) {
				return nil, errf("end says %q, have %d records", line[4:], len(r.Records))
			}
			ended = true
		default:
			return nil, errf("unexpected line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !ended {
		return nil, fmt.Errorf("truncated report (no end line)")
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	return r, nil
}

// Format 2 is how the corpus stores a self-report: the same content as the
// program's text (format 1), with the records in columns that compress
// about a third smaller. After the header lines of format 1 (method,
// goversion, goarch, range, bounds, slide) come
//
//	pairs <n>
//	<function>\t<file>              n lines: pair i has id i
//	records <n>
//
// and then, in binary, four columns: n pc deltas (uvarint); n kinds
// (uvarint: 0 a gap, 1 no frame, k+1 k frames); for all F frames of all
// records, innermost first, the pair id as a zigzag varint difference from
// the id of the previous record's frame at the same depth; then the F
// lines, each a zigzag varint difference from the last line of the same
// pair (0 at first).
const format2 = "gosym-selfreport 2"

// EncodeReport returns r in format 2.
func EncodeReport(r *Report) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nmethod %s\ngoversion %s\ngoarch %s\nrange %x %x\nbounds %s\nslide %x\n",
		format2, r.Method, r.GoVersion, r.GOARCH, r.Start, r.End, r.Bounds, r.Slide)
	ids := map[[2]string]int{}
	var pairs []string
	for _, rec := range r.Records {
		for _, f := range rec.Frames {
			k := [2]string{f.Function, f.File}
			if _, ok := ids[k]; !ok {
				ids[k] = len(pairs)
				pairs = append(pairs, f.Function+"\t"+f.File)
			}
		}
	}
	fmt.Fprintf(&b, "pairs %d\n", len(pairs))
	for _, p := range pairs {
		b.WriteString(p)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "records %d\n", len(r.Records))
	var deltas, kinds, idcol, linecol []byte
	pc := r.Start
	var prevID []int
	lastLine := make([]int, len(pairs))
	for _, rec := range r.Records {
		deltas = binary.AppendUvarint(deltas, rec.PC-pc)
		pc = rec.PC
		switch {
		case rec.Gap:
			kinds = binary.AppendUvarint(kinds, 0)
			continue
		default:
			kinds = binary.AppendUvarint(kinds, uint64(len(rec.Frames))+1)
		}
		for d, f := range rec.Frames {
			id := ids[[2]string{f.Function, f.File}]
			if d == len(prevID) {
				prevID = append(prevID, 0)
			}
			idcol = binary.AppendVarint(idcol, int64(id-prevID[d]))
			prevID[d] = id
			linecol = binary.AppendVarint(linecol, int64(f.Line-lastLine[id]))
			lastLine[id] = f.Line
		}
	}
	b.Write(deltas)
	b.Write(kinds)
	b.Write(idcol)
	b.Write(linecol)
	return b.Bytes()
}

// parseReport2 parses format 2.
func parseReport2(data []byte) (*Report, error) {
	r := &Report{}
	rest := data
	line := func() (string, error) {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return "", fmt.Errorf("truncated header")
		}
		s := string(rest[:i])
		rest = rest[i+1:]
		return s, nil
	}
	if s, err := line(); err != nil || s != format2 {
		return nil, fmt.Errorf("bad first line")
	}
	var pairs []Frame
	n := -1
	for n < 0 {
		s, err := line()
		if err != nil {
			return nil, err
		}
		key, val, _ := strings.Cut(s, " ")
		if err := r.setHeader(key, val); err != nil {
			return nil, err
		}
		switch key {
		case "pairs":
			var np int
			if np, err = strconv.Atoi(val); err == nil {
				for i := 0; i < np && err == nil; i++ {
					var p string
					if p, err = line(); err == nil {
						fn, file, ok := strings.Cut(p, "\t")
						if !ok {
							err = fmt.Errorf("bad pair %q", p)
						}
						pairs = append(pairs, Frame{Function: fn, File: file})
					}
				}
			}
		case "records":
			n, err = strconv.Atoi(val)
			if err == nil && n < 0 {
				err = fmt.Errorf("bad record count")
			}
		}
		if err != nil {
			return nil, err
		}
	}
	br := bytes.NewReader(rest)
	uv := func() uint64 {
		v, e := binary.ReadUvarint(br)
		if e != nil {
			panic(e)
		}
		return v
	}
	sv := func() int64 {
		v, e := binary.ReadVarint(br)
		if e != nil {
			panic(e)
		}
		return v
	}
	err := func() (err error) {
		defer func() {
			if e := recover(); e != nil {
				err = fmt.Errorf("truncated records: %v", e)
			}
		}()
		r.Records = make([]Record, n)
		pc := r.Start
		for i := range r.Records {
			pc += uv()
			if i > 0 && pc <= r.Records[i-1].PC {
				return fmt.Errorf("records not increasing")
			}
			r.Records[i].PC = pc
		}
		total := 0
		for i := range r.Records {
			switch k := uv(); k {
			case 0:
				r.Records[i].Gap = true
			default:
				if k > 1<<10 {
					return fmt.Errorf("bad record kind %d", k)
				}
				r.Records[i].Frames = make([]Frame, k-1)
				total += int(k - 1)
			}
		}
		var prevID []int
		idOf := make([][]int, n)
		for i := range r.Records {
			for d := range r.Records[i].Frames {
				if d == len(prevID) {
					prevID = append(prevID, 0)
				}
				id := prevID[d] + int(sv())
				if id < 0 || id >= len(pairs) {
					return fmt.Errorf("bad pair id %d", id)
				}
				prevID[d] = id
				idOf[i] = append(idOf[i], id)
			}
		}
		lastLine := make([]int, len(pairs))
		for i := range r.Records {
			for d, id := range idOf[i] {
				f := pairs[id]
				f.Line = lastLine[id] + int(sv())
				lastLine[id] = f.Line
				r.Records[i].Frames[d] = f
			}
		}
		if br.Len() != 0 {
			return fmt.Errorf("%d bytes after the records", br.Len())
		}
		return r.check()
	}()
	if err != nil {
		return nil, err
	}
	return r, nil
}

// check applies the checks common to both formats.
func (r *Report) check() error {
	if r.Method == "" || r.End <= r.Start {
		return fmt.Errorf("incomplete header")
	}
	if n := len(r.Records); n > 0 && r.Records[n-1].PC >= r.End {
		return fmt.Errorf("record beyond range end")
	}
	return nil
}

// setHeader sets the field of r that the header line "key val" gives, the
// same in both formats; other keys are left to the caller.
func (r *Report) setHeader(key, val string) error {
	var err error
	switch key {
	case "method":
		r.Method = val
	case "goversion":
		r.GoVersion = val
	case "goarch":
		r.GOARCH = val
	case "range":
		a, b, _ := strings.Cut(val, " ")
		if r.Start, err = strconv.ParseUint(a, 16, 64); err == nil {
			r.End, err = strconv.ParseUint(b, 16, 64)
		}
	case "bounds":
		r.Bounds = val
	case "slide":
		r.Slide, err = strconv.ParseUint(val, 16, 64)
	}
	return err
}
