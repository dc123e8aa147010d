//go:build unix

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// FuzzUnwindCore unwinds the threads of fuzzed core files with a corpus
// binary, as gosym unwind does: no panic, and at most maxFrames frames and
// one line saying why it stopped per thread, whatever the core (issue 21
// item 6). The seeds are cores whose stacks loop.
func FuzzUnwindCore(f *testing.F) {
	// The binary read from the corpus, not written out with all the
	// others as corpusEntry does: each fuzzing process does it.
	entries, err := testcorpus.Entries()
	if err != nil {
		f.Fatal(err)
	}
	var b *exe
	for _, e := range entries {
		if e.Name != "go1.26.8.linux-amd64" {
			continue
		}
		data, err := e.Binary()
		if err != nil {
			f.Fatal(err)
		}
		obj, err := object.NewBytes(data)
		if err != nil {
			f.Fatal(err)
		}
		tab, err := gosym.NewTable(obj)
		if err != nil {
			f.Fatal(err)
		}
		b = &exe{path: e.Name, obj: obj.(*object.File), tab: tab}
	}
	if b == nil {
		f.Fatal("no corpus entry go1.26.8.linux-amd64")
	}
	fuzzseed.Add(f, loopingCore(f, b.tab, 3, 64))
	fuzzseed.Add(f, loopingCore(f, b.tab, 1, 8))
	const maxFrames = 10
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		if err := b.unwindCore(&out, "core", data, maxFrames); err != nil {
			return
		}
		n := 0 // lines of the current thread
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if strings.HasPrefix(line, "thread ") {
				n = 0
				continue
			}
			if n++; n > maxFrames+1 {
				t.Fatalf("more than %d lines for a thread:\n%s", maxFrames+1, out.String())
			}
		}
	})
}

// FuzzParseProfile parses fuzzed profiles as gosym pprof reads them (gzip
// compressed or not, a compressed one decompressed up to a limit): no
// panic, and a profile it accepts encodes again. The seeds are a small
// profile, compressed and not, and a gzip stream of 20 MiB of zeros.
func FuzzParseProfile(f *testing.F) {
	loc := &profile.Location{ID: 1, Address: 0x401000, Mapping: &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x500000, File: "/bin/prog", BuildID: "0123abcd"}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Mapping:    []*profile.Mapping{loc.Mapping},
		Location:   []*profile.Location{loc},
		Sample:     []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{1}}},
	}
	var gz, raw bytes.Buffer
	if err := p.Write(&gz); err != nil {
		f.Fatal(err)
	}
	if err := p.WriteUncompressed(&raw); err != nil {
		f.Fatal(err)
	}
	fuzzseed.Add(f, gz.Bytes())
	fuzzseed.Add(f, raw.Bytes())
	fuzzseed.Add(f, gzipBomb(f, 1<<20, 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseProfile(data)
		if err != nil {
			return
		}
		if err := p.WriteUncompressed(new(bytes.Buffer)); err != nil {
			t.Fatalf("the parsed profile does not encode: %v", err)
		}
	})
}
