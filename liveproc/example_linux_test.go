//go:build linux

package liveproc_test

import (
	"debug/elf"
	"fmt"
	"log"
	"os"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/liveproc"
)

// Attach to a process, print each thread's stack, and let it go on. The
// executable may be position-independent: its Relocation places it.
func ExampleAttach() {
	pid := os.Getppid() // a Go process of the same architecture, which ptrace may trace
	exe := fmt.Sprintf("/proc/%d/exe", pid)
	tab, err := gosym.Open(exe)
	if err != nil {
		log.Fatal(err)
	}
	defer tab.Close()
	ef, err := elf.Open(exe)
	if err != nil {
		log.Fatal(err)
	}
	defer ef.Close()

	p, err := liveproc.Attach(pid)
	if err != nil {
		log.Fatal(err)
	}
	im, err := p.Image()
	if err != nil {
		log.Fatal(err)
	}
	rel, err := im.Relocation(ef) // an error if exe is not what the process runs
	if err != nil {
		log.Fatal(err)
	}
	ptr := 8
	if ef.Class == elf.ELFCLASS32 {
		ptr = 4
	}
	mem := rel.View(p, ptr, ef.ByteOrder) // the process's memory at the table's addresses
	for _, th := range p.Threads {
		fmt.Println("thread", th.PID)
		regs := gosym.Regs{PC: rel.ToLink(th.PC), SP: th.SP, LR: rel.ToLink(th.LR)}
		for fr, err := range tab.Unwind(regs, mem) {
			if err != nil {
				fmt.Println("\t", err)
				break
			}
			fmt.Printf("\t%#x %s\n", rel.ToRun(fr.PC), fr.Func.Name())
		}
	}
	stopped, err := p.Detach()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stopped for", stopped)
}
