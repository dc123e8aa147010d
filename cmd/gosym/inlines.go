package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/gosym-dev/gosym/gosym"
)

// inlineJSON is one line of inlines -json.
type inlineJSON struct {
	Name      string `json:"name"`
	File      string `json:"file"`
	StartLine uint32 `json:"start_line"`
}

// inlineCallJSON is one line of inlines -tree -json.
type inlineCallJSON struct {
	Depth    int         `json:"depth"`
	CallFile string      `json:"call_file"`
	CallLine uint32      `json:"call_line"`
	Name     string      `json:"name"`
	Ranges   [][2]string `json:"ranges"`
}

func runInlines(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("inlines")
	jsonOut := f.Bool("json", false, "write one JSON object per line (its fields are listed above)")
	tree := f.Bool("tree", false, "print the tree of inlined calls with call sites and PC ranges")
	b, fn, status := f.openFunc(args, stdout, stderr)
	if b == nil {
		return status
	}
	defer b.Close()

	w := bufio.NewWriter(stdout)
	enc := newJSONLines(w)
	if *tree {
		root, err := inlineTree(fn)
		if err != nil {
			return errorf(stderr, "%v", fileError(b.path, err))
		}
		if !*jsonOut {
			if fn.StartLine() > 0 {
				fmt.Fprintf(w, "%s %s\n", fn.Name(), fileLine(fn.File(), fn.StartLine()))
			} else {
				fmt.Fprintf(w, "%s %s\n", fn.Name(), fn.File())
			}
		}
		var walk func(n *inlineCall, depth int)
		walk = func(n *inlineCall, depth int) {
			for _, c := range n.calls {
				if *jsonOut {
					j := inlineCallJSON{Depth: depth, CallFile: c.callFile, CallLine: c.callLine, Name: c.name}
					for _, r := range c.ranges {
						j.Ranges = append(j.Ranges, [2]string{hex(r[0]), hex(r[1])})
					}
					enc.write(j)
				} else {
					fmt.Fprintf(w, "%s%s %s", strings.Repeat("  ", depth),
						fileLine(baseName(c.callFile), c.callLine), c.name)
					for _, r := range c.ranges {
						fmt.Fprintf(w, " [%#x,%#x)", r[0], r[1])
					}
					w.WriteByte('\n')
				}
				walk(c, depth+1)
			}
		}
		walk(root, 1)
	} else {
		inl, err := fn.InlineFunctions(nil)
		if err != nil {
			return errorf(stderr, "%v", fileError(b.path, err))
		}
		for _, in := range inl {
			if *jsonOut {
				enc.write(inlineJSON{in.Name, in.File, in.StartLine})
				continue
			}
			fmt.Fprintf(w, "%s\t%s\n", in.Name, fileLine(in.File, in.StartLine))
		}
	}
	if err := w.Flush(); err != nil {
		return errorf(stderr, "%v", err)
	}
	return exitOK
}

// An inlineCall is a node of the tree of inlined calls of a function: a
// call of name at callFile:callLine in its parent, whose code (with the
// calls inlined into it) occupies ranges.
type inlineCall struct {
	name     string
	callFile string
	callLine uint32
	ranges   [][2]uint64 // [lo, hi), in address order, adjacent ones merged
	calls    []*inlineCall
}

// child returns n's child for a call of name at file:line, adding it.
func (n *inlineCall) child(name, file string, line uint32) *inlineCall {
	for _, c := range n.calls {
		if c.name == name && c.callFile == file && c.callLine == line {
			return c
		}
	}
	c := &inlineCall{name: name, callFile: file, callLine: line}
	n.calls = append(n.calls, c)
	return c
}

func (n *inlineCall) addRange(lo, hi uint64) {
	if k := len(n.ranges); k > 0 && n.ranges[k-1][1] == lo {
		n.ranges[k-1][1] = hi
		return
	}
	n.ranges = append(n.ranges, [2]uint64{lo, hi})
}

// inlineTree builds the tree of fn's inlined calls that have code, from
// its inline tree (InlinedCalls) and the innermost call of each of its line
// ranges. Its children come in the order of their first instruction. Calls
// at the same line of the same caller are merged.
func inlineTree(fn gosym.Function) (*inlineCall, error) {
	lines, err := fn.Lines(nil)
	if err != nil {
		return nil, err
	}
	calls, err := fn.InlinedCalls(nil)
	if err != nil {
		return nil, err
	}
	root := &inlineCall{name: fn.Name()}
	var chain []int // the calls around a range, innermost first
	for _, l := range lines {
		chain = chain[:0]
		for k := l.Call; k >= 0; k = calls[k].Parent {
			chain = append(chain, k)
		}
		n := root
		for i := len(chain) - 1; i >= 0; i-- {
			c := &calls[chain[i]]
			n = n.child(c.Name, c.CallFile, c.CallLine)
			n.addRange(l.PCLo, l.PCHi)
		}
	}
	return root, nil
}
