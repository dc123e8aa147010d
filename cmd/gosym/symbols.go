package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/gosym-dev/gosym/gosym"
)

// symbolsJSON is the output of symbols -json.
type symbolsJSON struct {
	GoVersion string        `json:"go_version"`
	Path      string        `json:"path"`
	Modules   []moduleJSON  `json:"modules"`
	Packages  []packageJSON `json:"packages"`
}

type moduleJSON struct {
	Path    string `json:"path"`
	Version string `json:"version"`
	Sum     string `json:"sum,omitempty"`
	Main    bool   `json:"main,omitempty"`
}

type packageJSON struct {
	Path    string       `json:"path"`
	Module  string       `json:"module"`
	Symbols []symbolJSON `json:"symbols"`
}

type symbolJSON struct {
	Name     string `json:"name"`
	Physical bool   `json:"physical"`
	Inlined  bool   `json:"inlined"`
}

func runSymbols(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("symbols")
	jsonOut := f.Bool("json", false, "write one JSON object (its fields are listed above)")
	b, _, status := f.open(args, 1, 1, stdout, stderr)
	if b == nil {
		return status
	}
	defer b.Close()
	out, err := collectSymbols(b.tab)
	if err != nil {
		return errorf(stderr, "%v", fileError(b.path, err))
	}
	w := bufio.NewWriter(stdout)
	if *jsonOut {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.Encode(out)
	} else {
		writeSymbols(w, out)
	}
	if err := w.Flush(); err != nil {
		return errorf(stderr, "%v", err)
	}
	return exitOK
}

// writeSymbols writes the text form of symbols: a line per package, and
// under it one indented line per symbol.
func writeSymbols(w io.Writer, s *symbolsJSON) {
	for _, p := range s.Packages {
		name := p.Path
		if name == "" {
			name = "(no package)"
		}
		if p.Module != "" {
			fmt.Fprintf(w, "%s\t%s\n", name, p.Module)
		} else {
			fmt.Fprintf(w, "%s\n", name)
		}
		for _, sym := range p.Symbols {
			switch {
			case sym.Physical && sym.Inlined:
				fmt.Fprintf(w, "\t%s\t(also inlined)\n", sym.Name)
			case sym.Inlined:
				fmt.Fprintf(w, "\t%s\t(inlined only)\n", sym.Name)
			default:
				fmt.Fprintf(w, "\t%s\n", sym.Name)
			}
		}
	}
}

// collectSymbols lists every function of tab, physical or inlined, by
// package, with the module of each package (Table.Packages).
func collectSymbols(tab *gosym.Table) (*symbolsJSON, error) {
	pkgs, err := tab.Packages()
	if err != nil {
		return nil, err
	}
	out := &symbolsJSON{GoVersion: tab.GoVersion(), Modules: []moduleJSON{}}
	if bi, err := tab.BuildInfo(); err == nil {
		out.Path = bi.Path
		if bi.Main.Path != "" {
			out.Modules = append(out.Modules, moduleOf(bi.Main, true))
		}
		for _, d := range bi.Deps {
			out.Modules = append(out.Modules, moduleOf(*d, false))
		}
	}
	for _, p := range pkgs {
		pj := packageJSON{Path: p.Path, Module: p.Module}
		for _, s := range p.Symbols {
			pj.Symbols = append(pj.Symbols, symbolJSON{Name: s.Name, Physical: s.Physical, Inlined: s.Inlined})
		}
		out.Packages = append(out.Packages, pj)
	}
	return out, nil
}

// moduleOf describes m, following a replacement to the module used.
func moduleOf(m debug.Module, main bool) moduleJSON {
	if m.Replace != nil {
		return moduleJSON{Path: m.Path, Version: m.Replace.Version, Sum: m.Replace.Sum, Main: main}
	}
	return moduleJSON{Path: m.Path, Version: m.Version, Sum: m.Sum, Main: main}
}
