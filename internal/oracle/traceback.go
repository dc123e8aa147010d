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
				g.Frames = append(g.Frames, TracebackFrame{Func: fn, FP: fp, SP: sp, PC: pc})
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
