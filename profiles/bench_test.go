package profiles_test

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/profiles"
)

// benchLocations is the size of the benchmark's profile.
const benchLocations = 100_000

// benchProfile is a profile of the installed go command with
// benchLocations locations spread evenly over its functions, one sample
// each, addresses and one mapping only, as a profiler sends it.
var benchProfile = sync.OnceValues(func() (*profile.Profile, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(strings.TrimSpace(string(out)), "bin", "go")
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := &profile.Mapping{ID: 1, File: bin}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			m.Start, m.Limit, m.Offset = p.Vaddr, p.Vaddr+p.Memsz, p.Off
			break
		}
	}
	tab, err := gosym.Open(bin)
	if err != nil {
		return nil, err
	}
	defer tab.Close()
	var ranges [][2]uint64
	var total uint64
	for fn, err := range tab.Functions() {
		if err != nil {
			return nil, err
		}
		ranges = append(ranges, [2]uint64{fn.Entry(), fn.End()})
		total += fn.End() - fn.Entry()
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Mapping:    []*profile.Mapping{m},
	}
	step := total / benchLocations
	var pos uint64
	for _, r := range ranges {
		for ; pos < r[1]-r[0] && len(p.Location) < benchLocations; pos += step {
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Address: r[0] + pos}
			p.Location = append(p.Location, loc)
			p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{1}})
		}
		pos -= r[1] - r[0]
	}
	return p, nil
})

// BenchmarkSymbolize symbolizes the 100k-location profile of the go
// command: locs/s is locations per second (the Table is opened once,
// outside the timing, as a symbolization service keeps it).
func BenchmarkSymbolize(b *testing.B) {
	p, err := benchProfile()
	if err != nil {
		b.Skip(err)
	}
	tab, err := gosym.Open(p.Mapping[0].File)
	if err != nil {
		b.Fatal(err)
	}
	defer tab.Close()
	b.ReportAllocs()
	var elapsed time.Duration
	var q *profile.Profile
	for b.Loop() {
		b.StopTimer()
		q = p.Copy()
		b.StartTimer()
		t0 := time.Now()
		st, err := profiles.Symbolize(q, []*gosym.Table{tab})
		elapsed += time.Since(t0)
		if err != nil || st.Symbolized != len(p.Location) {
			b.Fatalf("%+v, %v", st, err)
		}
	}
	b.ReportMetric(float64(len(p.Location))*float64(b.N)/elapsed.Seconds(), "locs/s")
	b.ReportMetric(framesPerLocation(q), "frames/loc")
}

// framesPerLocation returns the average number of lines of p's locations.
func framesPerLocation(p *profile.Profile) float64 {
	n := 0
	for _, l := range p.Location {
		n += len(l.Line)
	}
	return float64(n) / float64(len(p.Location))
}

// BenchmarkGoToolPprof does the same work with `go tool pprof`'s local
// symbolization (debug/gosym: no inlined frames), writing the symbolized
// profile (-proto): each iteration is one run of the tool, and locs/s
// counts the whole run, parsing and writing included.
// BenchmarkGoToolPprofNoSymbolize is the same run on an already
// symbolized profile: the difference is the symbolization.
func BenchmarkGoToolPprof(b *testing.B)            { benchGoToolPprof(b, false) }
func BenchmarkGoToolPprofNoSymbolize(b *testing.B) { benchGoToolPprof(b, true) }

func benchGoToolPprof(b *testing.B, symbolized bool) {
	p, err := benchProfile()
	if err != nil {
		b.Skip(err)
	}
	tool, err := exec.Command("go", "tool", "-n", "pprof").Output()
	if err != nil {
		b.Skip(err)
	}
	if symbolized {
		tab, err := gosym.Open(p.Mapping[0].File)
		if err != nil {
			b.Fatal(err)
		}
		p = p.Copy()
		_, err = profiles.Symbolize(p, []*gosym.Table{tab}, profiles.WithWrappers())
		tab.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	in := filepath.Join(dir, "in.pb.gz")
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "out.pb.gz")
	for b.Loop() {
		cmd := exec.Command(strings.TrimSpace(string(tool)), "-symbolize=local", "-proto", "-output", out, in)
		cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+dir)
		if o, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go tool pprof: %v\n%s", err, o)
		}
	}
	b.ReportMetric(float64(len(p.Location))*float64(b.N)/b.Elapsed().Seconds(), "locs/s")
	// The tool really symbolized: every location has a function.
	data, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	q, err := profile.ParseData(data)
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range q.Location {
		if len(l.Line) == 0 {
			b.Fatalf("go tool pprof left location %#x unsymbolized", l.Address)
		}
	}
	b.ReportMetric(framesPerLocation(q), "frames/loc")
}
