package profiles_test

import (
	"fmt"
	"log"
	"os"

	"github.com/google/pprof/profile"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/profiles"
)

// Symbolize a profile that holds addresses and mappings only, from the
// stripped binary it was recorded from, and write it for go tool pprof.
func ExampleSymbolize() {
	f, err := os.Open("cpu.pb.gz")
	if err != nil {
		log.Fatal(err)
	}
	p, err := profile.Parse(f)
	f.Close()
	if err != nil {
		log.Fatal(err)
	}
	tab, err := gosym.Open("/path/to/binary")
	if err != nil {
		log.Fatal(err)
	}
	defer tab.Close()
	st, err := profiles.Symbolize(p, []*gosym.Table{tab})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d of %d locations symbolized\n", st.Symbolized, st.Locations)
	out, err := os.Create("cpu.symbolized.pb.gz")
	if err != nil {
		log.Fatal(err)
	}
	if err := p.Write(out); err != nil {
		log.Fatal(err)
	}
	if err := out.Close(); err != nil {
		log.Fatal(err)
	}
}
