// Package profiles symbolizes pprof profiles from Go binaries, stripped or
// not: every location gets its whole inline stack, innermost first, with
// function names, files, lines and start lines, read from the binary's Go
// symbol table by package gosym. No DWARF and no symbol table is needed,
// so `go build -ldflags=-s -w` binaries symbolize as well as any.
//
// It is for profiles that arrive with addresses and mappings only, as
// continuous profilers collect them (an eBPF unwinder, a profile stripped
// before upload, a runtime/pprof profile whose symbols were dropped).
// [Symbolize] works on a *profile.Profile of github.com/google/pprof
// in place; the command `gosym pprof` wraps it for files.
//
// # Mappings
//
// Each of the profile's mappings is matched with a binary by build ID: the
// mapping's BuildID is compared with the binary's GNU build ID and with
// its Go build ID ([object.BuildIDs]). When one binary is given, no
// mapping has its build IDs, and the main mapping (the first, as the
// profile format defines it) has none, that binary is the main mapping's
// and every other mapping's of the same file: runtime/pprof records GNU
// build IDs only, which Go binaries have by default since Go 1.24. A
// profile without any mapping holds link-time addresses; one binary then
// symbolizes all of them. Nothing else is guessed: the locations of other
// mappings, and those without a mapping in a profile that has some, are
// left as they are. When the binary at hand is known to hold the same code
// as the one profiled under another build ID (the stripped twin of the
// unstripped build that ran, say), [WithMain] names it as the main
// mapping's binary whatever the build IDs. A profile none of whose
// locations is in a mapping of the binaries given is an error wrapping
// [ErrNoMatch], which shows the build IDs of both.
//
// A location's address is a run-time address. It becomes a file offset in
// its mapping (address − Start + Offset) and then the link-time address of
// that byte of the binary ([object.AddrOfFileOffset]), so
// position-independent executables and other binaries the loader moved
// symbolize wherever they ran.
//
// # Addresses
//
// runtime/pprof records for each frame the address of the instruction it
// was executing: the interrupted instruction for the frame a CPU-profiling
// signal stopped, and the return address minus one (inside the call
// instruction) for every frame that made a call. Most profilers do the
// same, so by default addresses are looked up as they are. For profiles
// that hold raw return addresses, [WithReturnAddresses] looks up address
// − 1 instead, for every location that is not only ever the innermost of
// its samples.
//
// # Stacks of runtime.Callers PCs
//
// runtime.Callers, since Go 1.12, lists a made-up PC for each caller of
// an inlined call: the call site's PC, after the real one. Profiles made
// of such PCs, one location each (runtime/pprof of Go 1.12 and 1.13, and
// a few CPU samples of later releases up to 1.20), already spell out the
// inline stack over several locations. A location whose next location,
// in every sample, lies exactly at the call site of its innermost inlined
// call and holds the rest of its frames keeps its innermost frame only,
// as the runtime recorded it, so that no frame appears twice in a sample.
//
// # Wrappers
//
// Runtime tracebacks, and the stacks runtime/pprof records since Go 1.12,
// leave out compiler-generated wrapper frames (methods promoted through
// embedding, pointer-receiver wrappers of value methods, ...), except a
// wrapper that called a panic function (runtime.gopanic,
// runtime.sigpanic, runtime.panicwrap), which is shown because the panic
// happened in it. Symbolize does the same: a wrapper frame is dropped from
// its location unless the frame it called is one of those, and a location
// left with no frame at all is removed from the samples, as the runtime
// would never have recorded its address. [WithWrappers] keeps every
// frame.
//
// # Functions
//
// Symbolize creates one Function per distinct (name, file, start line),
// with Name and SystemName both the symbol name as stored in the binary
// (what runtime/pprof writes since Go 1.21: "pkg.F[go.shape.int]", not
// "pkg.F[...]"). Functions and locations that no longer serve any sample
// after symbolization are removed.
//
// # Locations outside Go code
//
// Addresses in no Go function (C code of a cgo binary, assembly stubs
// outside the Go symbol table) get one frame named after the function
// symbol of the object's symbol table that holds them
// (object.FuncSymbols), with no file or line; where the symbol table is
// stripped or has none there, they are left unsymbolized. Nothing is
// guessed.
package profiles
