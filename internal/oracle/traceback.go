package oracle

import (
	"bufio"
	"strconv"
	"strings"
)

// Goroutine is one goroutine of a traceback the runtime printed at
// GOTRACEBACK=crash level (or with debug.SetTraceback("crash")), where
// every physical frame carries fp=, sp= and pc=.
type Goroutine struct {
	Header string // "goroutine 7 gp=0xc000003340 m=nil [chan receive]:" (or "goroutine 0 [idle]:" ...)
	Frames []TracebackFrame
}

// TracebackFrame is one physical frame of a traceback.
type TracebackFrame struct {
	Func       string // the function line's name, without the arguments
	FP, SP, PC uint64
	// File and Line are the position the runtime printed for the frame
	// (its function's, at the PC it symbolizes the frame with: the PC
	// itself in the first frame and under a trap, else the call's);
	// "" and 0 where it printed "?".
	File string
	Line uint32
}

// ParseTraceback returns the goroutines of a traceback text, in order,
// with the physical frames of each (the lines carrying sp=); inlined
// frames and "created by" lines, which have none, are left out.
func ParseTraceback(text string) []Goroutine {
	var out []Goroutine
	var fn string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "goroutine ") && strings.HasSuffix(line, ":"):
			out = append(out, Goroutine{Header: line})
			fn = ""
		case len(out) == 0:
		case strings.HasPrefix(line, "\t"):
			fp, ok1 := field(line, " fp=")
			sp, ok2 := field(line, " sp=")
			pc, ok3 := field(line, " pc=")
			if ok1 && ok2 && ok3 && fn != "" {
				g := &out[len(out)-1]
				file, ln := position(line)
				g.Frames = append(g.Frames, TracebackFrame{Func: fn, FP: fp, SP: sp, PC: pc, File: file, Line: ln})
			}
			fn = ""
		case line == "":
		default:
			fn = line
			if i := strings.LastIndexByte(fn, '('); i > 0 {
				fn = fn[:i]
			}
			if strings.HasPrefix(fn, "created by ") {
				fn = ""
			}
		}
	}
	return out
}

// position returns the file and line of a frame's position line,
// "\tFILE:LINE +0xOFF fp=... sp=... pc=...".
func position(line string) (string, uint32) {
	s := strings.TrimPrefix(line, "\t")
	if i := strings.IndexByte(s, ' '); i >= 0 {
		s = s[:i]
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0
	}
	n, err := strconv.ParseUint(s[i+1:], 10, 32)
	if err != nil || s[:i] == "?" {
		return "", 0
	}
	return s[:i], uint32(n)
}

// field returns the hexadecimal number after key in line.
func field(line, key string) (uint64, bool) {
	i := strings.Index(line, key)
	if i < 0 {
		return 0, false
	}
	s := line[i+len(key):]
	if j := strings.IndexByte(s, ' '); j >= 0 {
		s = s[:j]
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	return v, err == nil
}
