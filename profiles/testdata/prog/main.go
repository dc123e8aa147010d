// Command prog is the program whose profiles the oracle test records: it
// runs CPU-bound work with inlined calls, promoted-method wrappers,
// closures, goroutines and allocations for a while, then writes a CPU
// profile and a heap profile as runtime/pprof symbolizes them.
//
// Usage: prog CPUPROFILE HEAPPROFILE
//
// It builds with every Go release from 1.10 (GOPATH mode, no modules).
package main

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// extras are more kinds of work, from files built only with some releases
// or build modes.
var extras []func(int) int

var sink interface{}

type point struct{ X, Y int }

// Promoted methods of an embedded type get wrappers, called through the
// sort.Interface below.
type byX struct{ points }
type points []point

func (p points) Len() int           { return len(p) }
func (p points) Less(i, j int) bool { return p[i].X < p[j].X || p[i].X == p[j].X && p[i].Y < p[j].Y }
func (p points) Swap(i, j int)      { p[i], p[j] = p[j], p[i] }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func dist(a, b point) int { return abs(a.X-b.X) + abs(a.Y-b.Y) }

func sortWork(seed int) int {
	ps := make(points, 2000)
	for i := range ps {
		seed = seed*1103515245 + 12345
		ps[i] = point{seed >> 8 & 1023, seed >> 20 & 1023}
	}
	sort.Sort(byX{ps})
	total := 0
	for i := 1; i < len(ps); i++ {
		total += dist(ps[i-1], ps[i])
	}
	return total
}

func stringWork(seed int) int {
	var b strings.Builder
	for i := 0; i < 500; i++ {
		b.WriteString(strconv.Itoa(seed + i))
		b.WriteByte(' ')
	}
	s := b.String()
	n := 0
	for _, f := range strings.Fields(s) {
		if strings.Contains(f, "7") {
			n += len(strings.ToUpper(f))
		}
	}
	return n + strings.Count(s, "1")
}

func hashWork(seed int) int {
	data := bytes.Repeat([]byte(fmt.Sprintf("seed %d ", seed)), 2000)
	sum := sha256.Sum256(data)
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, 5)
	w.Write(data)
	w.Close()
	return int(sum[0]) + buf.Len()
}

type record struct {
	Name  string            `json:"name"`
	Tags  []string          `json:"tags"`
	Attrs map[string]string `json:"attrs"`
}

func jsonWork(seed int) int {
	recs := make([]record, 100)
	for i := range recs {
		recs[i] = record{Name: "r" + strconv.Itoa(seed+i), Tags: []string{"a", "b"}, Attrs: map[string]string{"k": strconv.Itoa(i)}}
	}
	data, _ := json.Marshal(recs)
	var back []record
	json.Unmarshal(data, &back)
	sink = back
	return len(data)
}

func mapWork(seed int) int {
	m := make(map[int]int)
	for i := 0; i < 20000; i++ {
		m[(seed+i)*7%5003] += i
	}
	total := 0
	for k, v := range m {
		total += k ^ v
	}
	return total
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: prog CPUPROFILE HEAPPROFILE")
		os.Exit(2)
	}
	runtime.MemProfileRate = 2048
	cpu, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// A higher rate than StartCPUProfile's 100 Hz, for more locations
	// (StartCPUProfile then warns that the rate is already set).
	runtime.SetCPUProfileRate(500)
	if err := pprof.StartCPUProfile(cpu); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	works := append([]func(int) int{sortWork, stringWork, hashWork, jsonWork, mapWork}, extras...)
	deadline := time.Now().Add(time.Second)
	var wg sync.WaitGroup
	results := make([]int, 2)
	for g := range results {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := g; time.Now().Before(deadline); i++ {
				results[g] += works[i%len(works)](i)
			}
		}(g)
	}
	wg.Wait()
	pprof.StopCPUProfile()
	cpu.Close()
	heap, err := os.Create(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := pprof.Lookup("heap").WriteTo(heap, 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	heap.Close()
	fmt.Println(results[0] + results[1])
}
