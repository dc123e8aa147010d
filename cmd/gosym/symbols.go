package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"runtime/debug"
	"slices"
	"strings"

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
// package, with the module of each package from the build info.
func collectSymbols(tab *gosym.Table) (*symbolsJSON, error) {
	type flags struct{ physical, inlined bool }
	byPkg := map[string]map[string]*flags{}
	pkgFile := map[string]string{} // a source file of each package
	add := func(name, file string, inlined bool) {
		pkg, sym := gosym.SymbolName(name)
		m := byPkg[pkg]
		if m == nil {
			m = map[string]*flags{}
			byPkg[pkg] = m
		}
		if old := pkgFile[pkg]; old == "" || !inPackageDir(old, pkg) && inPackageDir(file, pkg) {
			pkgFile[pkg] = file
		}
		fl := m[sym]
		if fl == nil {
			fl = new(flags)
			m[sym] = fl
		}
		if inlined {
			fl.inlined = true
		} else {
			fl.physical = true
		}
	}
	var calls []gosym.InlinedCall
	for fn, err := range tab.Functions() {
		if err != nil {
			return nil, err
		}
		add(fn.Name(), fn.File(), false)
		if calls, err = fn.InlinedCalls(calls); err != nil {
			return nil, err
		}
		for _, c := range calls {
			add(c.Name, c.File, true)
		}
	}

	out := &symbolsJSON{GoVersion: tab.GoVersion(), Modules: []moduleJSON{}}
	var mods []moduleJSON
	if bi, err := tab.BuildInfo(); err == nil {
		out.Path = bi.Path
		if bi.Main.Path != "" {
			mods = append(mods, moduleOf(bi.Main, true))
		}
		for _, d := range bi.Deps {
			mods = append(mods, moduleOf(*d, false))
		}
	}
	out.Modules = append(out.Modules, mods...)
	// The standard library's files are in one directory tree, that of
	// package runtime: "/usr/local/go/src/runtime/proc.go" gives
	// "/usr/local/go/src/" ("" for a -trimpath build).
	std, ok := strings.CutSuffix(pkgFile["runtime"], "runtime/"+path.Base(pkgFile["runtime"]))
	if !ok {
		std = "\x00" // no runtime: no package is known to be std
	}
	for pkg, syms := range byPkg {
		p := packageJSON{Path: pkg, Module: packageModule(pkg, pkgFile[pkg], std, mods, out.Path)}
		for name, fl := range syms {
			p.Symbols = append(p.Symbols, symbolJSON{Name: name, Physical: fl.physical, Inlined: fl.inlined})
		}
		slices.SortFunc(p.Symbols, func(a, b symbolJSON) int { return strings.Compare(a.Name, b.Name) })
		out.Packages = append(out.Packages, p)
	}
	slices.SortFunc(out.Packages, func(a, b packageJSON) int { return cmp.Compare(a.Path, b.Path) })
	return out, nil
}

// moduleOf describes m, following a replacement to the module used.
func moduleOf(m debug.Module, main bool) moduleJSON {
	if m.Replace != nil {
		return moduleJSON{Path: m.Path, Version: m.Replace.Version, Sum: m.Replace.Sum, Main: main}
	}
	return moduleJSON{Path: m.Path, Version: m.Version, Sum: m.Sum, Main: main}
}

// inPackageDir reports whether file is in a directory named after the
// import path pkg (code of a package may come from elsewhere, such as
// runtime's assembly in internal/bytealg).
func inPackageDir(file, pkg string) bool {
	dir := path.Dir(file)
	return dir == pkg || strings.HasSuffix(dir, "/"+pkg)
}

// packageModule returns the path of the module that holds pkg, one of
// whose source files is file:
//
//   - for package main, the main module;
//   - the module with the longest path that is pkg or a prefix of it at a
//     '/';
//   - "std" for the standard library: in a binary built in module mode
//     (with a main module) every other package whose first path element
//     has no '.'; else a package whose file is in the standard library's
//     tree std ("cmd" for the packages of a command of the Go
//     distribution, whose build info names no main module);
//   - "" when it cannot be told (a GOPATH-mode package, or a package with
//     no source file of its own, such as one with only an init function).
func packageModule(pkg, file, std string, mods []moduleJSON, cmdPath string) string {
	best := ""
	moduleMode := false
	for _, m := range mods {
		if m.Main {
			moduleMode = true
			if pkg == "main" {
				return m.Path
			}
		}
		if (pkg == m.Path || strings.HasPrefix(pkg, m.Path+"/")) && len(m.Path) > len(best) {
			best = m.Path
		}
	}
	first, _, _ := strings.Cut(pkg, "/")
	switch {
	case best != "" || pkg == "":
		return best
	case first == "cmd" && strings.HasPrefix(cmdPath, "cmd/"):
		return "cmd"
	case moduleMode && !strings.Contains(first, ".") && pkg != "main":
		return "std"
	case inStd(file, std):
		return "std"
	}
	return ""
}

// inStd reports whether file is in the standard library's tree std. Code
// of some packages is in another's files (time's in runtime's), so any
// directory of the tree counts. In a -trimpath build (std is "") the
// standard library's files are the relative paths whose first element is
// no module's ("golang.org/x/text@v0.3.0/...").
func inStd(file, std string) bool {
	if std == "" {
		first, _, _ := strings.Cut(file, "/")
		return file != "" && !strings.HasPrefix(file, "/") && !strings.Contains(first, "@") && !strings.Contains(first, ".")
	}
	return strings.HasPrefix(file, std)
}
