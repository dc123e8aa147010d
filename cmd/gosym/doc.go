// Command gosym reads the Go symbol tables of executables built by any Go
// release from 1.2 on, for any operating system (ELF, Mach-O, PE, Plan 9,
// XCOFF and WebAssembly files) and architecture, stripped or not. It
// symbolizes addresses, lists functions, their lines and inlined calls,
// disassembles functions with their inline stacks, lists a binary's
// symbols by package and module, exports the tables for profilers, and
// symbolizes pprof profiles.
//
// Usage:
//
//	gosym <command> [flags] BINARY [args]
//
// The commands are info, funcs, addr2line, inlines, lines, disasm, lidia,
// gsym, symbfile, symbols, pprof, unwind and goroutines. Each takes -h ("gosym help CMD" is the same), which prints its
// section below and its flags; flags may come before or after the other
// arguments, and "--" ends them. The exit status is 0
// on success, 1 on an error (a file that cannot be read, a function that
// does not exist, a bad address) and 2 on bad usage. Error messages name
// the file and the cause, such as "gosym: /bin/ls: no Go symbol table
// (looked for sections .gopclntab, ...; found: ...)",
// "gosym: notes.txt: object: unknown format (magic 68 65 6c 6c; reads ELF,
// Mach-O, PE, Plan 9, XCOFF and WebAssembly)" or "gosym: prog: corrupt symbol table: pclntab
// claims 1099511627776 functions, more than fit".
//
// Input files (BINARY, PROFILE, CORE) must be regular files, or symbolic
// links to one: a FIFO, a device or a directory is refused before anything
// is read from it. An output file named by -o OUT is written according to
// what OUT is: "-" is standard output; a regular file, or a name not in
// use, is written under a temporary name in its directory and renamed over
// it when complete (an existing file keeps its permissions), so that OUT is
// never left half written; a FIFO or a character device (/dev/null, a
// terminal) is written in place, as the shell's > would (but a FIFO
// without a reader is an error, not a wait for one); a symbolic link
// is followed, and the file it points to written as above, the link left
// as it is; anything else (a directory, a socket, a block device) is
// refused.
//
// Addresses are hexadecimal, with or without 0x (or 0X), and are link-time
// addresses: for a position-independent executable loaded elsewhere,
// subtract the load bias first; for a return address taken from a stack,
// look up the address before it. A FUNC argument is a function's symbol
// name as stored in the binary ("main.main", "main.(*T).M",
// "pkg.F[go.shape.int]"; type arguments may be left out: "pkg.F"), or an
// address with 0x inside the function. When several functions have the
// name (instantiations of a generic function, vendored copies of a
// package), the command fails and lists them with their addresses, to
// give one of those instead; for a function that was inlined everywhere
// it says where.
//
// Text output spells unknown positions as go tool addr2line does, in every
// command: a PC in no function is in function "?" at "?:0", and a PC whose
// function records neither file nor line there (alignment padding, or a
// function without a line table) is at ":-1"; a file alone unknown is
// empty (":12").
//
// With -json, output is JSON Lines (one object per line), except for info,
// which writes one object; unknown files are "" there, addresses strings
// such as "0x401000", and the field names given below are stable.
//
// # info
//
//	gosym info [-json] BINARY
//
// Info prints the object format and architecture, the Go release that built
// the binary (from its build info, or before Go 1.13 from
// runtime.buildVersion), the pclntab layout (the first release that wrote
// it, magic, pointer size, instruction quantum, byte order, address and
// size), how the pclntab and the moduledata were found, the number of
// functions and source files, the text range and whether the binary is
// stripped.
//
// A binary is stripped when it has no symbol table: none of runtime.text,
// runtime.pclntab, pclntab (Go 1.2) and main.main can be looked up in it.
// Of an ELF file, only the static symbol table (.symtab) counts, not the
// dynamic one (.dynsym) that stripping keeps, which holds every Go symbol
// in a program that imports package plugin.
// Whether it has DWARF (a section .debug_info, .zdebug_info, __debug_info,
// __zdebug_info or, in XCOFF, .dwinfo) is reported separately, so "-ldflags=-s" (no symbols, and
// no DWARF either) and "-ldflags=-w" (no DWARF) builds can be told apart.
// The number of files is the table's own count from Go 1.16 on; older tables
// do not keep one, and info counts the distinct files of every function's
// line table instead (and says so).
//
// JSON fields: file, format ("elf", "macho", "pe", "plan9"), arch (GOARCH,
// "" if unknown), go_version ("" if unknown), pclntab_version ("1.2",
// "1.16", "1.18", "1.20"), magic ("0xfffffff1"), ptr_size, quantum,
// byte_order ("little", "big"), pclntab_addr, pclntab_size, found_by,
// moduledata_found_by ("" before Go 1.18), repairs (what was read
// differently from a Go linker's output, such as a garbled binary's
// unknown magic; "" if nothing), entry_key (garble's key, when there is
// one), validated (what was checked at open), functions, files,
// files_counted, text_start, text_end (one past the last function),
// symbols, dwarf, stripped.
//
// # funcs
//
//	gosym funcs [-json] [-match REGEXP] BINARY
//
// Funcs lists every function in address order, one per line:
//
//	ENTRY<TAB>END<TAB>NAME<TAB>FILE:LINE
//
// END is one past the last PC: the next function's entry, the pclntab
// recording no sizes, so alignment padding belongs to the function before
// it. FILE is the source file at the entry and LINE the line of the func
// keyword; Go 1.19 and older binaries do not record that line, and for them
// LINE is the line of the entry PC. Tabs separate the fields because names
// and file names may hold spaces. -match keeps the functions whose name
// matches the regular expression (unanchored).
//
// JSON fields: entry, end, name, file, start_line (0 when not recorded),
// entry_line, wrapper (a compiler-generated wrapper, which tracebacks hide).
//
// # addr2line
//
//	gosym addr2line [-inlines] [-json] BINARY [ADDR...]
//
// Addr2line symbolizes the addresses given as arguments or, when there are
// none, read from standard input, one per line. Its output is flushed
// whenever it has answered all the input read so far, so it can serve a
// program that writes an address and waits for the answer.
//
// Without flags, the output is that of "go tool addr2line" (which pprof
// runs), byte for byte for the same valid input: for each address two
// lines, the name of the physical function (the one that holds the code,
// not the inlined one) and the file:line of the innermost inlined call;
// "?" and "?:0" for an address in no function; ":-1" for a PC that has no
// line, such as alignment padding; and "!reverse translation not
// implemented" for a line containing a colon.
//
// Bad lines are where gosym departs from go tool addr2line, which silently
// looks up any line it cannot parse as address 0. gosym ignores white space
// around an address; a line that is still not a hexadecimal address of at
// most 64 bits (an empty line too) is reported on standard error, answered
// "?" and "?:0" so that the output stays in step with the input, and makes
// the exit status 1 once all the input is answered. And gosym reads the
// tables as the runtime does, so where debug/gosym is wrong (functions
// without a line table, the last file of Go 1.2–1.7 tables, the text start
// of stripped cgo binaries; see addr2line_test.go) the answers differ.
//
// With -inlines, each address gets two lines per frame, innermost first: the
// function (inlined or physical) and the file:line in it, which for an
// outer frame is the line of the inlined call.
//
// With -json, each address gets one object, modelled on the output of
// "llvm-symbolizer --output-style=JSON", with every frame innermost first
// whether or not -inlines is given:
//
//	{"Address":"0x484d1a","ModuleName":"BINARY","Symbol":[
//	  {"FunctionName":"gosymtest/leaf.Fold","FileName":"/src/leaf/fold.go","Line":7,
//	   "StartLine":5,"StartAddress":"","Wrapper":false},
//	  ...,
//	  {"FunctionName":"main.work","FileName":"/src/work.go","Line":12,
//	   "StartLine":9,"StartAddress":"0x484aa0","Wrapper":false}]}
//
// (on one line). StartLine is the line of the frame's func keyword (0 when
// the binary does not record it, before Go 1.20); StartAddress is the
// function's entry in the physical frame and "" in inlined ones; Wrapper
// marks compiler-generated wrappers. Symbol is [] for an address in no
// function. A bad line gets
//
//	{"Address":"LINE","ModuleName":"BINARY","Error":{"Message":"bad address \"LINE\""}}
//
// (LINE quoted in Message as far as its first 40 bytes) and a line with a
// colon the Message "reverse translation not implemented".
//
// # inlines
//
//	gosym inlines [-json] [-tree] BINARY FUNC
//
// Inlines lists every function inlined into FUNC, directly or not, once
// each, in the order of FUNC's inline tree:
//
//	NAME<TAB>FILE:STARTLINE
//
// FILE is the file of the inlinee's body (empty if none of its instructions
// is left) and STARTLINE the line of its func keyword (0 before Go 1.20). JSON
// fields: name, file, start_line.
//
// With -tree it shows what was inlined where: the tree of the inlined calls
// that have instructions, one per line, indented by depth, each with its
// call site (file:line in the caller), the callee and the PC ranges
// [lo,hi) of its instructions and those of the calls inlined into it. Calls
// of the same function from the same line of a caller are merged.
//
//	main.work /src/work.go:9
//	  work.go:11 main.chain [0x484aba,0x484ac2) [0x484b14,0x484b1c) ...
//	    work.go:31 gosymtest/mid.Outer [0x484aba,0x484ac2) ...
//	  work.go:14 gosymtest/shape.All [0x484b02,0x484b14) ...
//
// JSON fields, one object per call in the same order: depth (1 for calls
// made by FUNC itself), call_file, call_line, name, ranges (a list of
// ["0xlo","0xhi"] pairs).
//
// # lines
//
//	gosym lines [-json] BINARY FUNC
//
// Lines prints the PC ranges of FUNC over which function, file and line are
// constant, in address order, covering the function from its entry to its
// end:
//
//	LO<TAB>HI<TAB>FUNCTION<TAB>FILE:LINE[<TAB>PARENTPC]
//
// HI is one past the range; FUNCTION is the innermost inlined function at
// those PCs, or FUNC itself; PARENTPC, given for inlined code, is a PC
// whose location (see addr2line) is the call site. Go 1.9–1.11 tables record
// call sites differently and give no PARENTPC. JSON fields: lo, hi,
// function, file, line, parent_pc ("" when absent).
//
// # disasm
//
//	gosym disasm BINARY FUNC
//
// Disasm prints FUNC's instructions as "go tool objdump -s" does, in the same
// layout (file:line, address, encoding, instruction in Go assembler syntax),
// with calls and jumps to functions named from the symbol table, and adds
// what objdump cannot show: wherever the inline stack changes, a comment
// line with the stack, outermost first, each frame followed by the
// position of the call to the next:
//
//	; main.work work.go:11 > main.chain work.go:31 > gosymtest/mid.Outer
//	outer.go:6   0x484aba   48898424e8000000   MOVQ AX, 0xe8(SP)
//	; main.work
//	work.go:12   0x484ac2   488d4807           LEAQ 0x7(AX), CX
//
// The alignment padding at the end is not decoded but summarized as
// "; padding 0xLO-0xHI (N bytes)". Unlike objdump, which reads the object's
// symbol table, disasm names no data symbols: an operand objdump shows as
// "main.seed(SB)" is "0xb6ca7(IP)" here. It decodes amd64, 386, arm64, arm,
// ppc64 and ppc64le code; other architectures are an error.
//
// # lidia
//
//	gosym lidia [-lines=true] [-files=true] [-inlines=true] BINARY -o OUT
//
// Lidia writes the symbols of BINARY as a Lidia file, the format of
// Pyroscope's symbolizer: the PC ranges of every function and of its inlined
// calls with their call sites, line tables and source files, unless turned
// off by -lines=false, -files=false or -inlines=false. OUT is written as
// described above ("-o -" writes to standard output). When standard error is a terminal and the work takes more than a
// second, a progress line there shows the time spent and the bytes written.
//
// # gsym
//
//	gosym gsym BINARY -o OUT
//
// Gsym writes the symbols of BINARY as an LLVM GSYM file (version 1, as
// llvm-gsymutil reads it): every function with its line table and its
// whole inline tree, so that "llvm-gsymutil OUT --address=PC" prints the
// frames "gosym addr2line -inlines" prints, for any Go binary, stripped or
// not. Addresses are BINARY's link-time addresses; the same BINARY always
// gives the same OUT. OUT is written as for lidia, with the same progress
// line.
//
// # symbfile
//
//	gosym symbfile [-returnpads] [-o OUT] BINARY
//
// Symbfile writes the symbols of BINARY as an OpenTelemetry symbfile, the
// format of the OpenTelemetry eBPF profiler's symbolization service: the
// PC ranges of every function and of its inlined calls, with their call
// sites, line tables and source files; or, with -returnpads, its return
// pads instead: the whole inline stack at every address after a call
// instruction (found in amd64, 386, arm64, arm, ppc64 and ppc64le code;
// other architectures are an error). The profiler keeps one file per
// record kind, so each run writes one. OUT is written as described above;
// without -o, or with "-o -", to standard output. When standard error is
// a terminal and the work takes more than a second, a progress line there
// shows the time spent and the bytes written.
//
// # symbols
//
//	gosym symbols [-json] BINARY
//
// Symbols lists every function of BINARY, physical or only inlined into
// others, by package, with the module that provides each package: the
// input of a vulnerability scanner. The text output has a line per
// package, its import path and module separated by a tab, followed by one
// line per symbol, indented by a tab, with "(inlined only)" or "(also
// inlined)" after a tab where it applies:
//
//	net/http<TAB>std
//	<TAB>Header.Get
//	<TAB>Server.Serve.func1<TAB>(also inlined)
//
// A symbol is spelled as golang.org/x/vuln spells them: the function's
// name without its package, with the receiver's parentheses and '*'
// removed and type arguments kept ("Stack[go.shape.int].Pop",
// "Reader.initFileList.func1"); the package path is unescaped
// ("gopkg.in/yaml.v3"). Functions without a package (assembly and C
// functions, compiler-generated "type:" functions) are listed under "(no
// package)". The module is the one of the build info whose path is the
// longest prefix of the package's, the main module for package main, "std"
// for the standard library and "cmd" for the packages of a command of the
// Go distribution, or empty where the binary does not tell (GOPATH builds,
// and Go 1.12 and older, which record no build info).
//
// With -json it writes one object: go_version, path (the main package's
// import path, "" without build info), modules (a list of objects with
// path, version, sum and main, true for the main module; a replaced
// module shows the replacement's version and sum), and packages, a list
// sorted by path of objects with path ("" for the functions without a
// package), module and symbols, a list sorted by name of objects with
// name, physical (a function of the binary's function table) and inlined
// (inlined somewhere).
//
// # pprof
//
//	gosym pprof [-o OUT] [-wrappers] [-returnaddrs] [-main BINARY] PROFILE [BINARY...]
//
// Pprof symbolizes PROFILE, a pprof profile holding addresses and mappings
// (gzip-compressed or not), from the binaries, stripped or not, and writes
// it to OUT, or to standard output without -o: every location gets its
// whole inline stack, innermost first, with function names, files, lines
// and start lines, so that `go tool pprof` shows the inlined calls. Each
// mapping of the profile is matched with a binary by its build ID (GNU or
// Go); when the profile records none and one binary is given, that binary
// is the main mapping's. -main BINARY names the main mapping's binary
// whatever the build IDs, for a profile of another build of the same code
// (the unstripped twin of a stripped binary); other binaries are then
// optional. Locations in other mappings keep what they had; when no
// location is in a mapping of the binaries, pprof fails and shows the
// build IDs of the profile's main mapping and of the binaries. PROFILE
// must be a regular file; a compressed one may decompress to 32 times its
// size (16 MiB at least), more is refused, as a gzip bomb would be. OUT is
// written as described above.
// Wrapper frames are hidden as runtime tracebacks hide them, unless
// -wrappers; -returnaddrs says that the addresses are raw return
// addresses rather than the call addresses runtime/pprof records. See
// package profiles for the details.
//
// # unwind
//
//	gosym unwind [-frames N] BINARY CORE
//
// Unwind prints the stack of every thread of CORE, an ELF core file of a
// process running BINARY (as the Linux kernel, gdb's gcore or qemu-user
// write them), using only BINARY's Go symbol table: it works on stripped
// binaries, without frame pointers or DWARF. For each thread, a line
// "thread TID" (with "signal N" when the thread was receiving a signal),
// then one line per frame, innermost first, of tab-separated fields: the
// frame's PC and SP as the runtime's tracebacks print pc= and sp= (the PC
// is a return address in all frames but the first and the one a signal
// interrupted), the function, and its file:line. A PC inside inlined calls
// gets one line per inlined call first, marked "inlined" in a fifth field,
// then the physical function's line. The walk follows the runtime's own
// rules (see gosym.Table.Unwind), crossing the signal frames of linux
// threads on amd64, 386, arm64, arm, ppc64, ppc64le and s390x (from the
// signal handler's runtime.sigtramp to the interrupted code), and ends at the top of the stack, or with a line "unwinding stopped: REASON": a frame that cannot be
// unwound, or more than N frames (100 by default, as the runtime's
// tracebacks print at most 100 frames of a goroutine; inlined frames
// count), as a damaged stack can loop. Addresses are link-time
// addresses: a position-independent BINARY must have been loaded at its
// link address. BINARY's architecture must be the core's.
//
// # goroutines
//
//	gosym goroutines [-json] [-frames N] BINARY CORE
//
// Goroutines prints every goroutine of CORE, an ELF core file of a Go
// process running BINARY, as the runtime's traceback (GOTRACEBACK=crash)
// prints it, using only BINARY's Go symbol table and the runtime's
// structures as each release lays them out (see package goroutines): it
// works on stripped binaries. For each goroutine, a line "goroutine ID
// [STATUS]:" (", thread TID" after the status when it runs or is in a
// system call on a thread), then its frames, innermost first: a line
// "FUNCTION(...)" and a line "FILE:LINE +0xOFFSET fp=FP sp=SP pc=PC" for
// each physical frame, "FUNCTION(...)" and "FILE:LINE" for each inlined
// call; then "created by FUNCTION in goroutine ID" and the position of
// the go statement. A stack that cannot be followed ends with a line
// "unwinding stopped: REASON". With -json, one JSON object per goroutine
// and line: {"id", "status", "thread", "frames": [{"function", "file",
// "line", "pc", "sp", "inlined"}], "created_by": {"function", "file",
// "line", "goroutine"}}. At most N frames (100 by default; inlined frames
// count) are printed per goroutine. Damaged entries of the runtime's
// goroutine list are reported on standard error and the exit status is
// 1: the list printed is then partial. Addresses are link-time
// addresses: a position-independent BINARY must have been loaded at its
// link address.
package main
