package gosym_test

import (
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/object"
)

// A position-independent executable runs wherever the loader put it. To
// look up a PC of a running program, turn it into the link-time address a
// Table speaks through its file offset, which /proc/PID/maps gives, and
// the Table's object.
func ExampleTable_Object() {
	tab := openSelf()
	defer tab.Close()
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	pc := uint64(caller()) // a run-time PC of this process
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		log.Fatal(err)
	}
	// Each line: start-end perms offset dev inode path.
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[5] != exe {
			continue
		}
		start, end, _ := strings.Cut(f[0], "-")
		lo, _ := strconv.ParseUint(start, 16, 64)
		hi, _ := strconv.ParseUint(end, 16, 64)
		off, _ := strconv.ParseUint(f[2], 16, 64)
		if pc < lo || pc >= hi {
			continue
		}
		addr, err := object.AddrOfFileOffset(tab.Object(), pc-lo+off)
		if err != nil {
			log.Fatal(err)
		}
		locs, err := tab.ResolveLocations(addr, nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(locs[0].Function)
	}
	// Output: github.com/gosym-dev/gosym/gosym_test.caller
}

// ExampleTable_Unwind walks the stack of a stopped thread of a live
// process: its registers come from the debugger that stopped it (ptrace),
// its memory from /proc/PID/mem. The innermost frame's PC is looked up as
// it is, the return addresses of the others one byte back, except above a
// KindTrap function, whose caller's PC is the interrupted instruction.
func ExampleTable_Unwind() {
	const binary, pid = "/path/to/binary", 1234
	regs := gosym.Regs{PC: 0x49e551, SP: 0xc000051f88} // from PTRACE_GETREGS
	tab, err := gosym.Open(binary)
	if err != nil {
		log.Fatal(err)
	}
	defer tab.Close()
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	var locs []gosym.Location
	for fr, err := range tab.Unwind(regs, mem) {
		if err != nil {
			log.Print(err)
			break
		}
		// LookupPC is PC for the first frame and under a trap, else
		// the call instruction's PC, PC-1.
		locs, _ = fr.Func.ResolveLocations(fr.LookupPC(), locs)
		for _, l := range locs {
			fmt.Printf("%#x sp=%#x %s %s:%d\n", fr.PC, fr.SP, l.Function, l.File, l.Line)
		}
	}
}
