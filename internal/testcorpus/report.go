package testcorpus

import (
	"bufio"
	"bytes"
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

// ParseReport parses a self-report (uncompressed).
func ParseReport(data []byte) (*Report, error) {
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
				pc = r.Start
			case "bounds":
				r.Bounds = val
			case "slide":
				r.Slide, err = strconv.ParseUint(val, 16, 64)
			case "records":
				inRecords = true
			default:
				// Unknown header lines are allowed for later additions.
			}
			if err != nil {
				return nil, errf("%v", err)
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
	if r.Method == "" || r.End <= r.Start {
		return nil, fmt.Errorf("incomplete header")
	}
	if n := len(r.Records); n > 0 && r.Records[n-1].PC >= r.End {
		return nil, fmt.Errorf("record beyond range end")
	}
	return r, nil
}
