package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"

	"github.com/gosym-dev/gosym/elfcore"
	"github.com/gosym-dev/gosym/goroutines"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/mmapfile"
)

// goroutineJSON is one line of goroutines -json.
type goroutineJSON struct {
	ID        uint64         `json:"id"`
	Status    string         `json:"status"`
	Thread    int            `json:"thread"`
	Frames    []gframeJSON   `json:"frames"`
	CreatedBy *createdByJSON `json:"created_by,omitempty"`
}

type gframeJSON struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     uint32 `json:"line"`
	PC       string `json:"pc"`
	SP       string `json:"sp"`
	Inlined  bool   `json:"inlined"`
}

type createdByJSON struct {
	Function  string `json:"function"`
	File      string `json:"file"`
	Line      uint32 `json:"line"`
	Goroutine uint64 `json:"goroutine"`
}

func runGoroutines(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("goroutines")
	asJSON := f.Bool("json", false, "print one JSON object per goroutine")
	frames := f.Int("frames", 100, "print at most `N` frames of each goroutine")
	pos, status, ok := f.parse(args, 1, 2, stdout, stderr)
	if !ok {
		return status
	}
	if *frames < 1 {
		return errorf(stderr, "-frames %d: must be at least 1", *frames)
	}
	if len(pos) == 1 {
		pid, err := strconv.Atoi(pos[0])
		if err != nil || pid <= 0 {
			fmt.Fprintf(stderr, "gosym goroutines: %q is not a process id: give BINARY CORE, or PID\n", pos[0])
			return exitUsage
		}
		return goroutinesLive(pid, *frames, *asJSON, stdout, stderr)
	}
	b, err := openBinary(pos[0])
	if err != nil {
		return errorf(stderr, "%v", err)
	}
	defer b.Close()
	cf, err := mmapfile.Load(pos[1])
	if err != nil {
		return errorf(stderr, "%v", fileError(pos[1], err))
	}
	defer runtime.KeepAlive(cf)
	core, err := elfcore.NewFile(bytes.NewReader(cf.Bytes()))
	if err != nil {
		return errorf(stderr, "%v", fileError(pos[1], err))
	}
	if a := b.obj.Arch(); a != core.GOARCH() {
		return errorf(stderr, "%s: core of a %q process, binary for %q", pos[1], core.GOARCH(), a)
	}
	rel, err := b.relocation(pos[1], core.Image)
	if err != nil {
		return errorf(stderr, "%v", err)
	}
	p, err := goroutines.NewRelocated(b.tab, core, core.Threads, rel)
	if err != nil {
		return errorf(stderr, "%s: %v", pos[1], err)
	}
	w := bufio.NewWriter(stdout)
	damaged, err := printGoroutines(w, stderr, b.tab, p, rel, *frames, *asJSON)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return errorf(stderr, "%v", err)
	}
	if damaged > 0 {
		return errorf(stderr, "%s: %d entries of the goroutine list are damaged: the list above is partial", pos[1], damaged)
	}
	return exitOK
}

// printGoroutines prints every goroutine of p to w, as the runtime's
// traceback does or as JSON lines, at most maxFrames frames each (inlined
// ones included). Damaged entries of the list are reported to stderr and
// counted. PCs are printed as the process had them (rel.ToRun), and looked
// up at tab's link-time addresses.
func printGoroutines(w io.Writer, stderr io.Writer, tab *gosym.Table, p *goroutines.Process, rel elfcore.Relocation, maxFrames int, asJSON bool) (damaged int, err error) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	var locs []gosym.Location
	for g, gerr := range p.All() {
		if gerr != nil {
			// Reported, and the list goes on (All ends it where
			// the rest cannot be read).
			fmt.Fprintf(stderr, "gosym: %v\n", gerr)
			damaged++
			continue
		}
		j := goroutineJSON{ID: g.ID, Status: g.StatusString, Thread: g.Thread, Frames: []gframeJSON{}}
		if !asJSON {
			if g.Thread != 0 {
				fmt.Fprintf(w, "goroutine %d [%s, thread %d]:\n", g.ID, g.StatusString, g.Thread)
			} else {
				fmt.Fprintf(w, "goroutine %d [%s]:\n", g.ID, g.StatusString)
			}
		}
		printed := 0
		var pending []byte // the text of the previous physical frame, printed once its fp is known
		flush := func(fp uint64) {
			if pending != nil {
				fmt.Fprintf(w, string(pending), fp)
				pending = nil
			}
		}
		for fr, uerr := range p.Frames(g) {
			if uerr != nil {
				flush(0)
				if asJSON {
					fmt.Fprintf(stderr, "gosym: goroutine %d: %v\n", g.ID, uerr)
				} else {
					fmt.Fprintf(w, "\tunwinding stopped: %v\n", uerr)
				}
				break
			}
			flush(fr.SP)
			locs, err = fr.Func.ResolveLocations(fr.LookupPC(), locs)
			if err != nil || len(locs) == 0 {
				locs = append(locs[:0], gosym.Location{Function: fr.Func.Name()})
			}
			if printed += len(locs); printed > maxFrames {
				if !asJSON {
					fmt.Fprintf(w, "\t...more than %d frames, stopped at pc %#x sp %#x\n", maxFrames, rel.ToRun(fr.PC), fr.SP)
				}
				break
			}
			for i, l := range locs {
				inl := i < len(locs)-1
				j.Frames = append(j.Frames, gframeJSON{Function: l.Function, File: l.File, Line: l.Line,
					PC: fmt.Sprintf("%#x", rel.ToRun(fr.PC)), SP: fmt.Sprintf("%#x", fr.SP), Inlined: inl})
				if asJSON {
					continue
				}
				if inl {
					fmt.Fprintf(w, "%s(...)\n\t%s\n", l.Function, fileLine(l.File, l.Line))
					continue
				}
				pending = fmt.Appendf(nil, "%s(...)\n\t%s +%#x fp=%%#x sp=%#x pc=%#x\n", l.Function, fileLine(l.File, l.Line), fr.PC-fr.Func.Entry(), fr.SP, rel.ToRun(fr.PC))
			}
		}
		flush(0)
		if cb, ok := createdBy(tab, g, &locs); ok {
			j.CreatedBy = &cb
			if !asJSON {
				fmt.Fprintf(w, "created by %s", cb.Function)
				if cb.Goroutine != 0 {
					fmt.Fprintf(w, " in goroutine %d", cb.Goroutine)
				}
				fn, _ := tab.ResolveFunction(g.CreatedPC)
				fmt.Fprintf(w, "\n\t%s +%#x\n", fileLine(cb.File, cb.Line), g.CreatedPC-fn.Entry())
			}
		}
		if asJSON {
			if err := enc.Encode(j); err != nil {
				return damaged, err
			}
		} else {
			fmt.Fprintln(w)
		}
	}
	return damaged, nil
}

// createdBy returns where g was created, as the runtime's traceback
// prints it: the function of the go statement (the outermost frame at
// g.gopc), its file and line at the call, and the creating goroutine.
// Goroutine 1 and goroutines without a gopc have none.
func createdBy(tab *gosym.Table, g goroutines.Goroutine, locs *[]gosym.Location) (createdByJSON, bool) {
	if g.CreatedPC == 0 || g.ID == 1 {
		return createdByJSON{}, false
	}
	fn, err := tab.ResolveFunction(g.CreatedPC)
	if err != nil {
		return createdByJSON{}, false
	}
	pc := g.CreatedPC
	if pc > fn.Entry() {
		pc--
	}
	*locs, err = fn.ResolveLocations(pc, *locs)
	cb := createdByJSON{Function: fn.Name(), Goroutine: g.ParentID}
	if err == nil && len(*locs) > 0 {
		// The runtime names the physical function and the innermost
		// position.
		cb.File, cb.Line = (*locs)[0].File, (*locs)[0].Line
	}
	return cb, true
}
