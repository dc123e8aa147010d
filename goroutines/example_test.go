package goroutines_test

import (
	"fmt"
	"log"
	"os"

	"github.com/gosym-dev/gosym/elfcore"
	"github.com/gosym-dev/gosym/goroutines"
	"github.com/gosym-dev/gosym/gosym"
)

// This example prints every goroutine of a Go program's core file, with
// its stack, as the runtime's traceback does: the binary may be stripped.
func Example() {
	tab, err := gosym.Open("prog") // the binary the process ran
	if err != nil {
		log.Fatal(err)
	}
	defer tab.Close()
	f, err := os.Open("core")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	core, err := elfcore.NewFile(f)
	if err != nil {
		log.Fatal(err)
	}
	p, err := goroutines.New(tab, core, core.Threads)
	if err != nil {
		log.Fatal(err) // not a core of this binary, or an unknown release
	}
	var locs []gosym.Location
	for g, err := range p.All() {
		if err != nil {
			log.Print(err) // a damaged entry: the listing is partial
			continue
		}
		fmt.Printf("goroutine %d [%s]:\n", g.ID, g.StatusString)
		for fr, err := range p.Frames(g) {
			if err != nil {
				fmt.Printf("\t%v\n", err)
				break
			}
			locs, _ = fr.Func.ResolveLocations(fr.LookupPC(), locs)
			for _, l := range locs {
				fmt.Printf("%s\n\t%s:%d\n", l.Function, l.File, l.Line)
			}
		}
	}
}
