package object_test

import (
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/gosym-dev/gosym/object"
)

// Open the running program and find its Go symbol table: the section
// .gopclntab (ELF) or __gopclntab (Mach-O), or else the place the linker
// symbol runtime.pclntab names (PE, Plan 9; absent from stripped binaries,
// as test binaries are).
func ExampleOpen() {
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	f, err := object.Open(exe)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	sections, err := f.Sections()
	if err != nil {
		log.Fatal(err)
	}
	addr := uint64(0)
	for _, s := range sections {
		if s.Name == ".gopclntab" || s.Name == "__gopclntab" {
			addr = s.Addr
		}
	}
	if addr == 0 {
		sym, err := f.LookupSymbol("runtime.pclntab")
		if errors.Is(err, object.ErrNoSymbol) {
			fmt.Println("no pclntab section or symbol: scan the data")
			return
		} else if err != nil {
			log.Fatal(err)
		}
		addr = sym.Addr
	}
	for i, s := range sections {
		if s.Addr <= addr && addr < s.Addr+s.FileSize {
			data, err := f.SectionData(i)
			if err != nil {
				log.Fatal(err)
			}
			// The table's first word is its magic, in the target's byte
			// order: 0xfffffff1 for every release since Go 1.20.
			magic := f.Endian().Uint32(data[addr-s.Addr:])
			fmt.Printf("pclntab magic %#x\n", magic)
		}
	}
	// Output: pclntab magic 0xfffffff1
}
