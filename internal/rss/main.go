// Command rss opens a Go executable with gosym or with debug/gosym and
// resolves PCs spread over its functions, so that the peak resident set
// size of the two can be compared under /usr/bin/time -v:
//
//	go build -o /tmp/rss ./internal/rss
//	/usr/bin/time -v /tmp/rss -impl gosym  -n 1000000 "$(go env GOROOT)/bin/go"
//	/usr/bin/time -v /tmp/rss -impl stdlib -n 1000000 "$(go env GOROOT)/bin/go"
//
// -cachelimit sets gosym's line cache limit (Table.SetLineCacheLimit).
// Both resolve the same PCs: n draws, from a fixed seed, of a function
// (uniformly) and a PC in it (uniformly). gosym reports every frame of the
// inline stack (ResolveLocations); debug/gosym, which knows no inlining,
// the file, line and function of the PC (PCToLine). The command prints
// what it did, its time, and the Go heap at the end; the peak RSS is
// /usr/bin/time's "Maximum resident set size".
package main

import (
	"debug/elf"
	stdgosym "debug/gosym"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gosym-dev/gosym/gosym"
)

func main() {
	impl := flag.String("impl", "gosym", "`implementation`: gosym or stdlib")
	n := flag.Int("n", 1000000, "number of PCs to resolve")
	cacheLimit := flag.Int64("cachelimit", -1, "gosym's line cache limit in `bytes` (-1: the default)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: rss [-impl gosym|stdlib] [-n N] [-cachelimit bytes] binary\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	log.SetFlags(0)
	log.SetPrefix("rss: ")
	path := flag.Arg(0)

	start := time.Now()
	var r result
	var err error
	switch *impl {
	case "gosym":
		r, err = runGosym(path, *n, *cacheLimit)
	case "stdlib":
		r, err = runStdlib(path, *n)
	default:
		log.Fatalf("unknown implementation %q", *impl)
	}
	if err != nil {
		log.Fatal(err)
	}
	elapsed := time.Since(start)

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("impl %s, binary %s\n", *impl, path)
	fmt.Printf("functions %d, PCs resolved %d, frames %d, unresolved %d\n", r.funcs, *n, r.frames, r.misses)
	fmt.Printf("time %v (%.0f ns/PC, open included)\n", elapsed.Round(time.Millisecond), float64(elapsed.Nanoseconds())/float64(*n))
	fmt.Printf("Go heap at end: %.1f MiB in use, %.1f MiB from the OS; %d GCs\n",
		float64(ms.HeapAlloc)/(1<<20), float64(ms.Sys)/(1<<20), ms.NumGC)
	if st := procStatus("VmHWM", "RssAnon", "RssFile"); st != "" {
		fmt.Printf("/proc/self/status at end: %s\n", st)
	}
}

// procStatus returns the named fields of /proc/self/status (Linux), such
// as "VmHWM 18084 kB", or "" if there is no such file.
func procStatus(names ...string) string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && slices.Contains(names, k) {
			out = append(out, k+" "+strings.Join(strings.Fields(v), " "))
		}
	}
	return strings.Join(out, ", ")
}

type result struct {
	funcs, frames, misses int
}

// pcs calls fn with n PCs drawn from a fixed seed: a function chosen
// uniformly, then a PC in [entry, end).
func pcs(n int, entries, ends []uint64, fn func(pc uint64)) {
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		i := r.IntN(len(entries))
		fn(entries[i] + r.Uint64N(ends[i]-entries[i]))
	}
}

func runGosym(path string, n int, cacheLimit int64) (result, error) {
	tab, err := gosym.Open(path)
	if err != nil {
		return result{}, err
	}
	defer tab.Close()
	if cacheLimit >= 0 {
		tab.SetLineCacheLimit(cacheLimit)
	}
	var entries, ends []uint64
	for f, err := range tab.Functions() {
		if err != nil {
			return result{}, err
		}
		if f.End() > f.Entry() {
			entries, ends = append(entries, f.Entry()), append(ends, f.End())
		}
	}
	r := result{funcs: len(entries)}
	var locs []gosym.Location
	pcs(n, entries, ends, func(pc uint64) {
		locs, err = tab.ResolveLocations(pc, locs)
		if err != nil {
			r.misses++
		}
		r.frames += len(locs)
	})
	return r, nil
}

func runStdlib(path string, n int) (result, error) {
	f, err := elf.Open(path)
	if err != nil {
		return result{}, err
	}
	defer f.Close()
	sec := f.Section(".gopclntab")
	text := f.Section(".text")
	if sec == nil || text == nil {
		return result{}, fmt.Errorf("%s: no .gopclntab or .text section", path)
	}
	pcln, err := sec.Data()
	if err != nil {
		return result{}, err
	}
	// runtime.text is the start of .text for internally linked binaries,
	// such as the toolchain's.
	tab, err := stdgosym.NewTable(nil, stdgosym.NewLineTable(pcln, text.Addr))
	if err != nil {
		return result{}, err
	}
	var entries, ends []uint64
	for _, fn := range tab.Funcs {
		if fn.End > fn.Entry {
			entries, ends = append(entries, fn.Entry), append(ends, fn.End)
		}
	}
	r := result{funcs: len(entries)}
	pcs(n, entries, ends, func(pc uint64) {
		if _, _, fn := tab.PCToLine(pc); fn == nil {
			r.misses++
		} else {
			r.frames++
		}
	})
	return r, nil
}
