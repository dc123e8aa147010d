// Package gosym reads the symbol tables that the Go toolchain writes into
// every executable (the pclntab, the inline trees and the build info) and
// answers, without allocating, which function holds a PC, which source file
// and line it comes from, and which inlined calls wrap it.
//
// It reads binaries of every Go release from 1.2 on, for every operating
// system and architecture, through the small object.Object interface;
// package object opens ELF, Mach-O, PE, Plan 9, XCOFF and WebAssembly
// files. FORMAT.md, beside
// this file, describes the tables it reads.
//
// # Vocabulary
//
// The same word means the same thing in every package of the module
// (gosym, lidia, profiles, the command):
//
//	Function         a physical function, a value with getters (Table.ResolveFunction)
//	Func             a field that holds a Function (StackFrame.Func, LinePC.Func)
//	Function field   the name of the function some code belongs to, as in
//	                 runtime.Frame (Location, FunctionLine, LinePC)
//	Name             the name of the thing itself (Function.Name, InlinedCall,
//	                 InlineFunction)
//	Location         one logical frame at a PC, an inlined call or the physical
//	                 function (Table.ResolveLocations, lidia.Reader.Lookup)
//	StackFrame       one physical frame of a stack: PC, SP, Func (Table.Unwind)
//	InlinedCall      one node of a function's inline tree, with its call site;
//	                 FunctionLine.Call indexes Function.InlinedCalls
//	LookupPC         the PC to look a stack frame up at: the runtime's symPC
//	buf              the last argument of a lookup that returns a slice; the
//	                 answer is appended to buf[:0]
//	ErrPCNotFound    a PC in no function, or in no range of a Lidia file
//	ErrCorrupted     damaged data (lidia.ErrCorrupted wraps it)
//	ErrClosed        a lookup after Close (wraps fs.ErrClosed; so does lidia's)
//
// # Addresses
//
// A Table speaks link-time addresses: for a position-independent executable
// loaded elsewhere, subtract the load bias from a runtime PC first, or turn
// the PC's file offset (from /proc/PID/maps) into an address with
// object.AddrOfFileOffset (Table.Object gives the object).
//
// Lookups take the address of an instruction. Which address that is
// depends on where the PC came from:
//
//   - A thread's current PC, and the PC of a frame interrupted by a signal
//     or by asynchronous preemption (the frame under runtime.sigpanic or
//     runtime.asyncPreempt), is the instruction itself: look it up as is.
//   - A return address read from a stack (by a stack walk of your own, or
//     in a core file) is the instruction after the call: look up pc-1, as
//     the runtime does, to get the call's own line and inlined frames.
//     Table.Unwind's frames say which applies: look each up at
//     StackFrame.LookupPC.
//   - runtime.Callers returns return addresses too; runtime.CallersFrames
//     subtracts for you. The addresses of pprof profiles written by
//     runtime/pprof, and of most profilers, are already call PCs (return
//     address minus one): look them up as they are.
//   - WebAssembly (GOARCH=wasm) has no addresses for code: a Go wasm PC is
//     the function's index plus 0x1000, shifted left 16 bits (from Go 1.28
//     the index shifted left 16 bits, with bit 63 set), with the
//     function's resume point in the low 16 bits (package wasmobj). The
//     runtime's PCs are of that kind, and the rules above apply to them.
//
// # Stacks
//
// The table also holds what the runtime unwinds stacks with: the frame size
// at each PC (Function.SPDelta), the functions that need special treatment
// (Function.Kind, Function.SPWrite), and the arguments size
// (Function.ArgsSize). Table.Unwind walks a stack with them, from a
// thread's registers over memory read through an io.ReaderAt (a core
// file, /proc/PID/mem), following the runtime's rules for each
// architecture: it needs no frame pointers and no DWARF, so it works on
// stripped binaries. The command gosym unwind prints every thread's stack
// of an ELF core file.
//
// # Lifetime
//
// A Table made by Open owns its file. Close marks the Table closed: later
// lookups return ErrClosed, which matches fs.ErrClosed (see Table.Close
// for the rule of each method). The file's memory is released once nothing
// refers to the Table any longer, so that a Function obtained earlier, Info,
// and every string a Table returned keep answering as before.
package gosym
