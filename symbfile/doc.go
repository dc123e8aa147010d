// Package symbfile writes and reads OpenTelemetry symbfiles, the symbol
// format of the OpenTelemetry eBPF profiler's symbolization service,
// filled completely from a Go binary's pclntab: besides the physical
// functions, the ranges of every inlined call with its call site, source
// files and line tables, and the return pads (the whole inline stack after
// every call instruction).
//
// Write exports a gosym.Table: the file of ranges, or with WithReturnPads
// the file of return pads (the profiler keeps one file per record kind).
// Open and NewReader read a file of either kind, written here or by the
// profiler's own tools, and Reader.Lookup returns the inline stack at an
// address, innermost call first and the physical function last, each frame
// with its function, file and line: for files written here, exactly what
// gosym's Table.ResolveLocations returns for the binary. Addresses are
// link-time addresses, as the Table's.
//
// FORMAT.md, beside this file, describes the format: the magic, the
// messages and their fields, and why the protobuf encoding is written by
// hand here.
//
// # Ranges
//
// A range (a RangeV1 record) is a run of addresses with a function, a
// depth in the inline tree (0 for the physical function), a file and a line
// table, and for depth d ≥ 1 the call site in the frame at depth d-1: call
// file and call line. The frames at an address are the ranges that cover
// it, one per depth from 0 up. The files written here follow these rules:
//
//   - Ranges of depth 0 tile each physical function exactly, from its entry
//     to the next function's, alignment padding included, with the
//     function's name. Normally that is one range per function; a function
//     gets several where the file of its own code changes (package
//     initializers, code the compiler tags with a callee's file), and its
//     alignment padding, which has no position, is a range of its own
//     without a file or line table, so that Lookup there reports the
//     function with file "" and line 0, as ResolveLocations does.
//   - Each contiguous run of PCs of an inlined call is one range, at depth d
//     ≥ 1 for a call made from the frame at depth d-1, inside one range of
//     depth d-1. It is split the same way where the file of its own code
//     changes. Ranges of one depth never overlap, and none is empty.
//   - A range's file is the file of its code where it is the innermost
//     frame. A range that is never the innermost (all its code is inlined
//     calls) takes the call file of its first inlined call.
//   - The call file is left out where it is the file of the enclosing
//     range, which is what a reader takes then; an unknown call file is
//     written as the empty string.
//   - A range's line table holds a line only where the range is the
//     innermost frame: its first entry is where it first is, and an entry is
//     added where the line changes, so that a line that resumes after an
//     inlined call needs none. Line 0 is an unknown line.
//   - Records come in address order, by depth at one address; the first
//     has an absolute address, every other one the difference from the
//     record before it.
//
// Unlike lidia's files, these have no ranges for C functions (cgo,
// external linking): the OpenTelemetry profiler symbolizes those from
// their own debug information.
//
// # Return pads
//
// A return pad (a ReturnPadV1 record) is one address, the one after a call
// instruction minus 1 (as the profiler's agent reports the callers of a
// stack), and the whole inline stack there, outermost frame first, each
// frame with its function, and the file and line where it is: for every
// frame but the innermost, the call site of the next. Write finds the call
// instructions by decoding each function's code with golang.org/x/arch,
// from its entry to the end of its line table, instruction after
// instruction as go tool objdump does (architectures: CallArchitectures;
// on x86 the lengths of the common instructions are read from their
// opcode, ModRM and SIB bytes without the decoder, with the same result).
// In assembly functions with instructions the decoder does not know (x86
// VEX-encoded ones: AVX), decoding can lose the instruction boundaries, as
// objdump's does, and find a call where there is none or miss one; the
// stack such a pad holds is still the one at its address.
//
// # Strings
//
// Records refer to strings by index in the string table (a StringTableV1
// message) that precedes them, or hold them in place. Write writes a table
// for every chunk of records whose strings take up to 4 MiB, with the
// strings that chunk uses more than once, the most used first (their
// indices are the shortest varints); a string used once is written in
// place. Return pads can only refer to the table, so every string of
// theirs is in it. Names that are not UTF-8 (a damaged binary) are written
// with U+FFFD in place of each bad byte sequence, as protobuf strings must
// be UTF-8.
//
// # Reading
//
// NewReader decodes every message, resolving string references and
// relative addresses as it goes, and then sorts the ranges by depth and
// address and cuts each depth's address space into segments, each covered
// by one range or none. Lookup searches the segments of depth 0, 1, ...
// until a depth has none at the address: a search per frame, no
// allocation. Where ranges of one depth overlap, which files written here
// never have (others may, for identical code folded into one), the range
// that starts last wins, and at one start the shorter: the innermost of
// ranges that nest. An address no range covers is looked up among the
// return pads.
//
// # Bounds
//
// A file and its messages are read whole; a message over 16 MiB (the
// profiler's limit) is an error, and every count the reader keeps is one of
// the records it has read, so memory is proportional to the file's size.
// Write bounds the names it writes, and its records, by the size of the
// binary (twice the bytes its sections span, and 1 MiB): a damaged
// pclntab whose functions share one long line table would otherwise make
// a file many times the binary's size.
package symbfile
