package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gosym-dev/gosym/gosym"
)

func runAddr2line(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("addr2line")
	inlines := f.Bool("inlines", false, "print every frame of the inline stack, innermost first")
	jsonOut := f.Bool("json", false, "write one JSON object per address, with every frame (its fields are listed above)")
	b, pos, status := f.open(args, 1, -1, stdout, stderr)
	if b == nil {
		return status
	}
	defer b.Close()

	s := &symbolizer{
		b:       b,
		w:       bufio.NewWriter(stdout),
		stderr:  stderr,
		inlines: *inlines,
	}
	if *jsonOut {
		s.json = newJSONLines(s.w)
	}
	if len(pos) > 1 {
		for _, a := range pos[1:] {
			s.line(a)
		}
	} else {
		// Answer each line as soon as it is read when the input is
		// interactive (or a pipe with nothing more in it yet), but
		// don't flush per line when more input is already at hand.
		r := bufio.NewReader(stdin)
		for {
			if r.Buffered() == 0 {
				s.flush()
			}
			text, err := r.ReadString('\n')
			if text != "" {
				s.line(strings.TrimSuffix(text, "\n"))
			}
			if err != nil {
				if err != io.EOF {
					s.flush()
					return errorf(stderr, "reading standard input: %v", err)
				}
				break
			}
		}
	}
	if err := s.flush(); err != nil {
		return errorf(stderr, "%v", err)
	}
	return s.status
}

// A symbolizer answers addr2line's input lines.
type symbolizer struct {
	b       *exe
	w       *bufio.Writer
	stderr  io.Writer
	inlines bool
	json    jsonLines // enc nil without -json
	status  int
	locs    []gosym.Location
	buf     []byte
	werr    error
}

func (s *symbolizer) flush() error {
	if err := s.w.Flush(); err != nil && s.werr == nil {
		s.werr = err
	}
	return s.werr
}

// jsonFrame is one frame of addr2line -json, named as llvm-symbolizer
// names its fields.
type jsonFrame struct {
	FunctionName string
	FileName     string
	Line         uint32
	StartLine    uint32
	StartAddress string
	Wrapper      bool
}

type jsonError struct {
	Message string
}

// jsonAddr is the answer of addr2line -json for one address.
type jsonAddr struct {
	Address    string
	ModuleName string
	Symbol     []jsonFrame // innermost first; empty, not null, for no function
}

// jsonBad is the answer of addr2line -json for a bad input line.
type jsonBad struct {
	Address    string // the input line, trimmed
	ModuleName string
	Error      jsonError
}

// line answers one input line.
func (s *symbolizer) line(text string) {
	if strings.Contains(text, ":") {
		// go tool addr2line's answer to "file:line" (reverse
		// translation, which it does not do either).
		if s.json.enc != nil {
			s.json.write(jsonBad{strings.TrimSpace(text), s.b.path, jsonError{"reverse translation not implemented"}})
			return
		}
		fmt.Fprintf(s.w, "!reverse translation not implemented\n")
		return
	}
	pc, err := parseAddr(text)
	if err != nil {
		s.bad(text, err)
		return
	}
	locs, err := s.b.tab.ResolveLocations(pc, s.locs)
	s.locs = locs
	if err != nil && !errors.Is(err, gosym.ErrPCNotFound) {
		s.bad(text, fmt.Errorf("%s: %#x: %w", s.b.path, pc, err))
		return
	}
	if s.json.enc != nil {
		frames := make([]jsonFrame, len(locs))
		for i, l := range locs {
			frames[i] = jsonFrame{
				FunctionName: l.Function,
				FileName:     l.File,
				Line:         l.Line,
				StartLine:    l.StartLine,
				Wrapper:      l.Wrapper,
			}
		}
		if len(locs) > 0 {
			if fn, err := s.b.tab.ResolveFunction(pc); err == nil {
				frames[len(frames)-1].StartAddress = hex(fn.Entry())
			}
		}
		s.json.write(jsonAddr{hex(pc), s.b.path, frames})
		return
	}
	if len(locs) == 0 {
		s.writeNoFunc()
		return
	}
	if s.inlines {
		for _, l := range locs {
			s.w.WriteString(l.Function)
			s.w.WriteByte('\n')
			s.writeFileLine(l)
		}
		return
	}
	// The physical function, and the source position of the innermost
	// frame.
	s.w.WriteString(locs[len(locs)-1].Function)
	s.w.WriteByte('\n')
	s.writeFileLine(locs[0])
}

// writeFileLine writes l's "file:line\n" (see fileLine).
func (s *symbolizer) writeFileLine(l gosym.Location) {
	s.buf = appendFileLine(s.buf[:0], l.File, l.Line)
	s.buf = append(s.buf, '\n')
	s.w.Write(s.buf)
}

// bad reports a bad input line on stderr and answers it in the output, so
// that output stays in step with input.
func (s *symbolizer) bad(text string, err error) {
	s.status = exitError
	s.flush() // keep stdout and stderr in order on a terminal
	fmt.Fprintf(s.stderr, "gosym: %v\n", err)
	if s.json.enc != nil {
		s.json.write(jsonBad{strings.TrimSpace(text), s.b.path, jsonError{err.Error()}})
		return
	}
	s.writeNoFunc()
}

// writeNoFunc writes the answer for a PC in no function.
func (s *symbolizer) writeNoFunc() {
	s.w.WriteString(noFunc + "\n" + noPos + "\n")
}
