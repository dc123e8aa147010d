package gosym

import (
	"bytes"
	"debug/buildinfo"
	"errors"
	"testing"

	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// TestCorpusBuildInfo compares BuildInfo with debug/buildinfo wherever
// that reads the binary, stripped binaries included. Where it cannot
// (Plan 9, ELF without section headers), a binary built by Go 1.13 or later
// must still have build info with the right Go version; older binaries get
// ErrNoBuildInfo.
func TestCorpusBuildInfo(t *testing.T) {
	forEachEntry(t, func(t *testing.T, e testcorpus.Entry, bin []byte, tab *Table) {
		got, err := tab.BuildInfo()
		want, stdErr := buildinfo.Read(bytes.NewReader(bin))
		switch {
		case e.Minor() < 13:
			if !errors.Is(err, ErrNoBuildInfo) {
				t.Errorf("BuildInfo of a go1.%d binary: %v, %v; want ErrNoBuildInfo", e.Minor(), got, err)
			}
			if stdErr == nil {
				t.Errorf("debug/buildinfo read a go1.%d binary: %v", e.Minor(), want)
			}
		case err != nil:
			t.Errorf("BuildInfo: %v", err)
		case stdErr != nil:
			t.Logf("debug/buildinfo cannot read it (%v); BuildInfo: %s", stdErr, got.GoVersion)
			if got.GoVersion != e.GoVersion {
				t.Errorf("BuildInfo GoVersion %q, want %q", got.GoVersion, e.GoVersion)
			}
		case got.String() != want.String():
			t.Errorf("BuildInfo:\n%s\ndebug/buildinfo:\n%s", got, want)
		}
	})
}

// TestBuildInfoSelf compares BuildInfo of the test binary, which records
// this module's dependencies and build settings, with debug/buildinfo,
// and for ELF also on a copy without section headers, where
// debug/buildinfo finds nothing.
func TestBuildInfoSelf(t *testing.T) {
	want, err := buildinfo.ReadFile(selfPath(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := selfTable(t).BuildInfo()
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("BuildInfo:\n%s\ndebug/buildinfo:\n%s", got, want)
	}
	t.Logf("%d dependencies, %d settings", len(want.Deps), len(want.Settings))
}

// TestBuildInfoCorrupt damages a build line of the newest base's build
// information: BuildInfo's error must wrap ErrCorrupted.
func TestBuildInfoCorrupt(t *testing.T) {
	m, _, _ := newestBase(t)
	sec := m.section(".go.buildinfo")
	if sec < 0 {
		t.Skip("no .go.buildinfo")
	}
	d := bytes.Clone(m.data[sec])
	m.data[sec] = d
	i := bytes.Index(d, []byte("build\t"))
	if i < 0 {
		t.Fatal("no build line")
	}
	d[i+len("build\t")] = '=' // "build line with missing key"
	tab, err := NewTable(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.BuildInfo(); !errors.Is(err, ErrCorrupted) {
		t.Errorf("BuildInfo = %v, want ErrCorrupted", err)
	}
}
