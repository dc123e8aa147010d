// Package gsym writes and reads LLVM GSYM files (version 1, the format of
// llvm-gsymutil and of the symbolication services built on LLVM's
// GsymReader), filled from a Go binary's pclntab: every function, its
// line table and its whole inline tree, so that a GSYM consumer gets Go's
// inlined frames, files and lines for any Go binary, stripped or not.
//
// Write exports a gosym.Table; Open and NewReader read a GSYM file of any
// origin (Write's, or llvm-gsymutil --convert's), and Reader.Lookup
// returns the frames at an address, innermost inlined call first and the
// function last, as llvm-gsymutil --address reports them. For a file
// written by Write that is, at every PC of every function, exactly what
// gosym's Table.ResolveLocations returns for the binary. Addresses are
// link-time addresses, as the Table's.
//
// FORMAT.md in this directory describes the layout and the choices Write
// makes where the format leaves them open.
package gsym
