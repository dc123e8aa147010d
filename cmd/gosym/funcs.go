package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"

	"github.com/gosym-dev/gosym/gosym"
)

// funcJSON is one line of funcs -json.
type funcJSON struct {
	Entry     string `json:"entry"`
	End       string `json:"end"`
	Name      string `json:"name"`
	File      string `json:"file"`
	StartLine uint32 `json:"start_line"`
	EntryLine uint32 `json:"entry_line"`
	Wrapper   bool   `json:"wrapper"`
}

func runFuncs(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("funcs")
	jsonOut := f.Bool("json", false, "write one JSON object per function (its fields are listed above)")
	match := f.String("match", "", "list only functions whose name matches `REGEXP` (unanchored)")
	pos, status, ok := f.parse(args, 1, 1, stdout, stderr)
	if !ok {
		return status
	}
	var re *regexp.Regexp
	if *match != "" {
		var err error
		if re, err = regexp.Compile(*match); err != nil {
			fmt.Fprintf(stderr, "gosym funcs: bad -match: %v\n", err)
			return exitUsage
		}
	}
	b, err := openBinary(pos[0])
	if err != nil {
		return errorf(stderr, "%v", err)
	}
	defer b.Close()

	w := bufio.NewWriter(stdout)
	enc := newJSONLines(w)
	var locs []gosym.Location
	for fn, err := range b.tab.Functions() {
		if err != nil {
			w.Flush()
			return errorf(stderr, "%v", fileError(b.path, err))
		}
		if re != nil && !re.MatchString(fn.Name()) {
			continue
		}
		var entryLine uint32
		locs, err = fn.ResolveLocations(fn.Entry(), locs)
		if err == nil && len(locs) > 0 {
			// The innermost frame, whose file is fn.File().
			entryLine = locs[0].Line
		}
		if *jsonOut {
			enc.write(funcJSON{
				Entry:     hex(fn.Entry()),
				End:       hex(fn.End()),
				Name:      fn.Name(),
				File:      fn.File(),
				StartLine: fn.StartLine(),
				EntryLine: entryLine,
				Wrapper:   fn.Wrapper(),
			})
			continue
		}
		line := fn.StartLine()
		if line == 0 {
			line = entryLine
		}
		fmt.Fprintf(w, "%#x\t%#x\t%s\t%s\n", fn.Entry(), fn.End(), fn.Name(), fileLine(fn.File(), line))
	}
	if err := w.Flush(); err != nil {
		return errorf(stderr, "%v", err)
	}
	return exitOK
}
