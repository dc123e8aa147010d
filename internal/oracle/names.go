package oracle

import "strings"

// PrintName returns name the way runtime.Frame.Function prints it from
// Go 1.21 on: everything from the first '[' to the last ']' becomes
// "[...]" (runtime.funcNameForPrint). Go 1.18–1.20 linkers applied the
// same rewrite when writing names into the pclntab, so it also maps a
// DWARF name onto the symbol-table name of those releases. Like the
// runtime, it does not distinguish type arguments from array types:
// "type:.eq.[2]runtime.Frame" becomes "type:.eq.[...]runtime.Frame".
func PrintName(name string) string {
	i := strings.IndexByte(name, '[')
	j := strings.LastIndexByte(name, ']')
	if i < 0 || j <= i {
		return name
	}
	return name[:i] + "[...]" + name[j+1:]
}

// NormalizeName maps a function name from any of the sources this package
// deals with (DWARF, the pclntab, debug/gosym, runtime.Frame.Function, of
// any Go release) onto one spelling, so that names of the same function
// compare equal:
//
//   - the middle dot '·' (U+00B7) of Go ≤1.4 names such as "main.func·001"
//     becomes '.', as debug/gosym already does for symbols read from a
//     Go 1.2 .gosymtab;
//   - type arguments become "[...]" (PrintName).
func NormalizeName(name string) string {
	return PrintName(strings.ReplaceAll(name, "·", "."))
}
