package gosym

import (
	"strconv"
	"strings"
)

// FuncKind classifies the functions that an unwinder must treat specially.
type FuncKind uint8

const (
	// KindNormal is every other function.
	KindNormal FuncKind = iota
	// KindTop is the outermost frame of a stack: unwinding stops there
	// (runtime.goexit, runtime.mstart, runtime.rt0_go, runtime.sigtramp...).
	KindTop
	// KindTrap is a function entered without a CALL (runtime.sigpanic,
	// runtime.asyncPreempt, the debugger's runtime.debugCallV2): the frame
	// below it holds the interrupted PC itself, not a return address.
	KindTrap
	// KindStackSwitch is a function that switches stacks
	// (runtime.systemstack, runtime.mcall, runtime.morestack,
	// runtime.gogo, runtime.asmcgocall...): the frame below it may be on
	// another stack.
	KindStackSwitch
)

// String returns the kind's name: "normal", "top", "trap" or "stack switch".
func (k FuncKind) String() string {
	switch k {
	case KindNormal:
		return "normal"
	case KindTop:
		return "top"
	case KindTrap:
		return "trap"
	case KindStackSwitch:
		return "stack switch"
	}
	return "FuncKind(" + strconv.Itoa(int(k)) + ")"
}

// Kind classifies f the way the runtime's unwinder does (FORMAT.md,
// "Function kinds").
//
// From Go 1.17 the TOPFRAME flag of the record makes a KindTop. The other
// kinds, and KindTop before 1.17, come from the funcID, which the linker
// assigns to a fixed list of runtime functions by name
// (cmd/internal/objabi/funcid.go). Its numbering changes from release to
// release, so Kind reads the name, and where the release records funcIDs
// (Go 1.10 and later) it also requires the funcID to be non-zero, as the
// linker made it for exactly those names. Go 1.2–1.9 record no funcID: the
// name is the whole rule there, as it was for those runtimes (they compared
// function entries with the entries of runtime.goexit, runtime.mstart, ...).
func (f Function) Kind() FuncKind {
	if f.t == nil {
		return KindNormal
	}
	name := f.Name()
	if f.t.hasFlags() && f.flags()&flagTopFrame != 0 {
		return KindTop
	}
	rest, ok := strings.CutPrefix(name, "runtime.")
	if !ok {
		if name == "_rt0_go" && !f.t.hasFlags() { // Go 1.2–1.3's name of runtime.rt0_go
			return KindTop
		}
		return KindNormal
	}
	k := kindByName(rest, f.t.hasFlags())
	if k == KindNormal {
		return k
	}
	if f.t.layout.funcIDSize != 0 && f.funcID() == 0 {
		return KindNormal
	}
	return k
}

// kindByName returns the kind of runtime.name. Functions that mark the top
// of a stack are listed only for releases without the TOPFRAME flag
// (flags false): the runtime's topofstack of Go 1.2–1.16 stopped at these.
func kindByName(name string, flags bool) FuncKind {
	switch name {
	case "sigpanic", "asyncPreempt", "debugCallV1", "debugCallV2":
		return KindTrap
	case "systemstack", "mcall", "morestack", "gogo", "asmcgocall",
		"onM", "lessstack": // 1.4's systemstack; 1.2–1.3's segmented stacks
		return KindStackSwitch
	case "goexit", "mstart", "rt0_go", "externalthreadhandler":
		if !flags {
			return KindTop
		}
	}
	return KindNormal
}
