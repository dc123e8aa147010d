package gosym

import (
	"cmp"
	"path"
	"runtime/debug"
	"slices"
	"strings"
)

// Package is a package the binary holds code of: the code of its own
// functions, or code of its functions inlined into others.
type Package struct {
	Path string // import path, unescaped; "" for symbols without a package
	// Module is the path of the module that holds the package (see
	// ModuleOf), "std" for the standard library, "cmd" for the commands
	// of the Go distribution, or "" when it cannot be told.
	Module  string
	Symbols []Symbol // by name
}

// Symbol is a function of a package, named as vulnerability databases
// name symbols (SymbolName): "Server.Serve", "Box[go.shape.int].Map".
type Symbol struct {
	Name     string
	Physical bool // the binary has the function's code as a function of its own
	Inlined  bool // the function's code was inlined into another
}

// Packages returns every package the binary holds code of, by import
// path, each with its module and its symbols, physical and inlined. It
// reads every function and its inline tree: its cost grows with the
// binary, as a scanner's would.
func (t *Table) Packages() ([]Package, error) {
	type flags struct{ physical, inlined bool }
	byPkg := map[string]map[string]*flags{}
	pkgFile := map[string]string{} // a source file of each package
	add := func(name, file string, inlined bool) {
		pkg, sym := SymbolName(name)
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
	var calls []InlinedCall
	for fn, err := range t.Functions() {
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
	bi, _ := t.BuildInfo()
	mods := newModuleIndex(bi, pkgFile["runtime"])
	out := make([]Package, 0, len(byPkg))
	for pkg, syms := range byPkg {
		p := Package{Path: pkg, Module: mods.moduleOf(pkg, pkgFile[pkg])}
		for name, fl := range syms {
			p.Symbols = append(p.Symbols, Symbol{Name: name, Physical: fl.physical, Inlined: fl.inlined})
		}
		slices.SortFunc(p.Symbols, func(a, b Symbol) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Package) int { return cmp.Compare(a.Path, b.Path) })
	return out, nil
}

// ModuleOf returns the path of the module that holds package pkg, one of
// whose source files (as the binary records them) is file, from the
// build information bi (nil if the binary has none); runtimeFile is a
// source file of package runtime in the same binary, which locates the
// standard library's tree ("" if unknown). The module is:
//
//   - for package main, the main module;
//   - the module with the longest path that is pkg or a prefix of it at a
//     '/';
//   - "std" for the standard library: in a binary built in module mode
//     (with a main module) every other package whose first path element
//     has no '.'; else a package whose file is in the standard library's
//     tree ("cmd" for the packages of a command of the Go distribution,
//     whose build info names no main module);
//   - "" when it cannot be told (a GOPATH-mode package, or a package with
//     no source file of its own, such as one with only an init function).
//
// Table.Packages applies it to every package.
func ModuleOf(bi *debug.BuildInfo, runtimeFile, pkg, file string) string {
	return newModuleIndex(bi, runtimeFile).moduleOf(pkg, file)
}

// moduleIndex is what ModuleOf needs of a binary.
type moduleIndex struct {
	main    string   // the main module's path; "" if none
	mods    []string // the paths of the main module and the dependencies
	cmdPath string   // the build info's package path ("cmd/go" for the go command)
	std     string   // the standard library's tree: "/usr/local/go/src/"; "" for -trimpath; "\x00" if unknown
}

func newModuleIndex(bi *debug.BuildInfo, runtimeFile string) moduleIndex {
	var x moduleIndex
	if bi != nil {
		x.cmdPath = bi.Path
		if bi.Main.Path != "" {
			x.main = bi.Main.Path
			x.mods = append(x.mods, bi.Main.Path)
		}
		for _, d := range bi.Deps {
			x.mods = append(x.mods, d.Path)
		}
	}
	// The standard library's files are in one directory tree, that of
	// package runtime: "/usr/local/go/src/runtime/proc.go" gives
	// "/usr/local/go/src/" ("" for a -trimpath build).
	std, ok := strings.CutSuffix(runtimeFile, "runtime/"+path.Base(runtimeFile))
	if !ok {
		std = "\x00" // no runtime: no package is known to be std
	}
	x.std = std
	return x
}

func (x moduleIndex) moduleOf(pkg, file string) string {
	if pkg == "main" && x.main != "" {
		return x.main
	}
	best := ""
	for _, m := range x.mods {
		if (pkg == m || strings.HasPrefix(pkg, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	first, _, _ := strings.Cut(pkg, "/")
	switch {
	case best != "" || pkg == "":
		return best
	case first == "cmd" && strings.HasPrefix(x.cmdPath, "cmd/"):
		return "cmd"
	case x.main != "" && !strings.Contains(first, ".") && pkg != "main":
		return "std"
	case inStd(file, x.std):
		return "std"
	}
	return ""
}

// inPackageDir reports whether file is in a directory named after the
// import path pkg (code of a package may come from elsewhere, such as
// runtime's assembly in internal/bytealg).
func inPackageDir(file, pkg string) bool {
	dir := path.Dir(file)
	return dir == pkg || strings.HasSuffix(dir, "/"+pkg)
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
