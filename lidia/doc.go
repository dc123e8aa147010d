// Package lidia writes and reads Lidia symbol files, the format of Grafana
// Pyroscope's lidia package (Language-Independent Debug Information
// Archive), filled completely: besides the physical functions, the ranges
// of inlined calls with their call sites, source files and line tables.
//
// Write exports a gosym.Table; Open and NewReader read a file, and
// Reader.Lookup returns the whole inline stack at an address, innermost
// call first and the physical function last, each frame with its function,
// file and line: for files written here, exactly what gosym's
// Table.ResolveLocations returns for the binary. Addresses are link-time
// addresses, as the Table's.
//
// # The byte layout
//
// A file is a 128-byte header followed by four tables, each with its
// offset, size and CRC32C (Castagnoli) in the header: the VA table (the
// sorted start address of every range, 4 or 8 bytes each), the range table
// (8 fields of 4 or 8 bytes per range: length, depth, function, file,
// line-table index and count, call file, call line), the strings table
// (each string a 4-byte little-endian length and its bytes; references are
// byte offsets, offset 0 is the empty string) and the line tables (pairs of
// 2- or 4-byte offset and line). Every integer is little-endian. Each
// table's width is the smallest that holds all its values. The layout is
// Pyroscope's (its lidia package defines it in code; this section is the
// description this package relies on); Pyroscope's reader reads the files
// written here, and Reader reads Pyroscope's.
//
// # What the ranges mean
//
// Pyroscope's code defines the layout but leaves most of the meaning open
// (its writer emits only physical functions, without files or lines). The
// files written here follow these rules:
//
//   - Ranges of depth 0 tile each physical function exactly: together they
//     span [entry, end), from its entry to the next function's entry with
//     the alignment padding included, without gap or overlap, each with the
//     function's name. Normally that is one range per function. A function
//     gets several only where the file of its own frame changes (package
//     initializers, some runtime code, and code the compiler tags with a
//     callee's file): see the file rule below; or where its ranges are so
//     dense that Pyroscope's reader would read too many (the walk rule
//     below). There are no empty ranges and no duplicates.
//   - Function symbols of the binary's symbol table (object.SymbolIterator:
//     ELF .symtab, else .dynsym; Mach-O, PE and Plan 9 symbol tables) that
//     no Go function covers, such as the C code of cgo and externally
//     linked binaries, get a depth-0 range each, with the symbol's name
//     and size, no file and no lines, as in Pyroscope's own files. A
//     symbol without a size (those formats record none) extends to the
//     next function symbol or the end of its section; a symbol that
//     starts inside an earlier range is left out, and so are the symbols
//     the Go linker puts where Go code starts and ends (runtime.text,
//     runtime.etext), which are not functions.
//   - The names written come from the binary: together they take at most
//     twice its size (and 1 MiB), or Write fails (a damaged name table
//     can make every name run to its end).
//   - Each contiguous run of PCs of an inlined call is one range, at depth
//     d ≥ 1 for a call made from the frame at depth d-1: function and file
//     of the inlined function, call file and call line of the call site in
//     the caller. Every such range lies inside one range of depth d-1.
//   - A range's file is the file of its frame at every PC it covers: the
//     file of the code itself where the range is the innermost frame, the
//     file of the call site where it is an outer frame. A range is split
//     where that file changes, so that Pyroscope's reader, which reports
//     each frame with its own range's file, gives every frame's file
//     exactly. Alignment padding has no file; it fits the file of the
//     range it is in (Pyroscope's reader reports that file there).
//   - Ranges are sorted by VA, then by depth. So Pyroscope's lookup, which
//     walks backward from the last range at or before an address and stops
//     at the first range of depth 0, returns exactly the inline stack.
//   - Walks are bounded: from a depth-0 range to the next there are at
//     most 64 ranges, so that Pyroscope's walk reads at most 64 at any
//     address. Where a function's ranges would outgrow that, its depth-0
//     range is split at the first PC where a new range would be one too
//     many, together with every inlined range open there, which starts
//     again at that PC (with its own line table); splits happen only
//     there.
//   - A line table lists (offset from the range's VA, line) pairs sorted by
//     offset; the line at an address is that of the entry with the largest
//     offset not above it. A range's line table need only be right where
//     the range is the innermost frame: an outer frame takes its line from
//     the call line of the range one deeper. Identical line tables are
//     stored once.
//   - A depth-0 range has no call site, so its call line, which
//     Pyroscope's reader never reads, holds instead where the alignment
//     padding at its end starts: the offset from its VA plus one (0: no
//     padding). There the function's frame has no file and line 0, as in
//     the pclntab.
//   - Strings are stored once each.
//
// Compiler-generated wrappers are kept as frames (gosym marks them with
// Location.Wrapper; the format has no such flag), so that Lookup returns
// every frame ResolveLocations does.
//
// WithLines, WithFiles and WithInlines leave out line tables (and call
// lines), files, or inlined ranges. Without inlined ranges, each depth-0
// range's line table gives the physical function's own line, which at
// inlined code is the line of the outermost call, so that Lookup returns
// the last frame of ResolveLocations.
//
// # Reading
//
// Open maps the file read-only where the operating system allows, and
// NewReader reads a file from bytes; neither copies the address, range or
// line tables. Both copy the strings table to the heap when the file is
// opened, so that the strings Lookup returns stay valid after Close. On
// opening, a Reader checks the header and that every table lies in the file
// (with WithCRC, the checksums too) and indexes the ranges once, in time
// linear in their number. Lookup then allocates nothing when dst has room,
// costs a few memory reads per frame (none in the strings table), and is
// safe for concurrent use (but not concurrently with Close).
//
// In a file whose ranges nest (sorted by VA and depth, none empty, ranges
// of one depth disjoint, each range of depth d ≥ 1 inside a range of depth
// d-1), as every file written here, the index holds each range as a
// 32-byte node (its VA, the range that encloses it, its strings' offsets
// and lengths, its call line), and the address space cut into pieces of one
// innermost range: 16 bytes per piece (its start, its innermost range, and
// where that range's line entries in effect from the piece's start on
// begin), about 1.5 pieces per range, and a coarse index of the pieces.
// That is about 56 bytes per range (4.8 MB for the file of 5.0 MB written
// for the go command, plus 0.8 MB of strings). Lookup finds the piece of an
// address, reads its range's node and a few line entries, and follows
// enclosing ranges outward, one node each: it does not read the file's VA
// and range tables, and takes the same time whatever the number of ranges.
// The index holds addresses in 32 bits, leaving out the gaps of 16 MiB or
// more between ranges (such as between a binary's Go code and C code
// placed far away); a file whose ranges cover more than 4 GiB, or with
// call lines above 32 bits, a strings table of 4 GiB or 2^31 line entries,
// is read with the walk below. Other files, such as those Pyroscope writes
// (which hold every Go function twice, once from the symbol table and once
// from the pclntab, and empty symbols), are read with Pyroscope's backward
// walk, whose quirks Lookup reproduces: each frame then has its own
// range's file and line; their index is a coarse one of the VAs (about
// half a byte per range). The walk reads at most 64 ranges, as many as
// the files written here need (Pyroscope's own have only ranges of depth
// 0); a longer one is a damaged file. A malformed file gets an error
// wrapping ErrCorrupted, from NewReader or, for a bad reference in a range
// or a walk past 64 ranges, from Lookup.
package lidia
