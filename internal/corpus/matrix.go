package main

import "strings"

// spec is one binary of the matrix.
type spec struct {
	Go      string // release, e.g. "go1.26.8"
	GOOS    string
	GOARCH  string
	Variant string // "default", "pie", "cgo-extlink", "stripped"
	Flags   []string
	Cgo     string // CGO_ENABLED value, "" for the release's default
	Tags    string
}

func (s spec) name() string {
	n := s.Go + "." + s.GOOS + "-" + s.GOARCH
	if s.Variant != "default" {
		n += "." + s.Variant
	}
	return n
}

// runnable tells whether this machine (linux/amd64) runs the binary.
func (s spec) runnable() bool {
	return s.GOOS == "linux" && (s.GOARCH == "amd64" || s.GOARCH == "386")
}

// fingerprint identifies how the entry is built; an entry whose
// fingerprint changed is rebuilt.
func (s spec) fingerprint(mode string) string {
	return strings.Join([]string{s.Go, s.GOOS, s.GOARCH, s.Variant, strings.Join(s.Flags, " "), "cgo=" + s.Cgo, "tags=" + s.Tags, mode, "src=" + srcHash}, "|")
}

// srcHash is set to a hash of testdata/src at start-up.
var srcHash string

// installedGo is the release installed on the machine, used for the
// cross builds and variants.
const installedGo = "go1.26.8"

// matrix returns the corpus in priority order: when the size budget is
// exceeded, entries are dropped from the end.
func matrix() []spec {
	var m []spec
	add := func(s spec) {
		if s.Variant == "" {
			s.Variant = "default"
		}
		m = append(m, s)
	}
	// linux/amd64, default build, one release per format family and more.
	for _, v := range []string{
		"go1.2.2", "go1.5.4", "go1.8.7", "go1.9.7", "go1.11.13", "go1.12.17",
		"go1.13.15", "go1.15.15", "go1.16.15", "go1.17.13", "go1.18.10",
		"go1.19.13", "go1.20.14", "go1.21.13", "go1.22.12", "go1.24.13",
		"go1.25.14", "go1.26.8", "go1.27.4",
	} {
		add(spec{Go: v, GOOS: "linux", GOARCH: "amd64"})
	}
	// Cross builds by the installed release.
	for _, t := range [][2]string{
		{"linux", "386"}, {"linux", "arm64"}, {"linux", "arm"}, {"linux", "ppc64"},
		{"linux", "s390x"}, {"linux", "riscv64"}, {"linux", "mips"},
		{"darwin", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"},
		{"windows", "386"}, {"plan9", "amd64"}, {"plan9", "386"},
	} {
		add(spec{Go: installedGo, GOOS: t[0], GOARCH: t[1], Cgo: "0"})
	}
	// linux/amd64 variants.
	pie := []string{"-buildmode=pie"}
	extlink := []string{"-ldflags=-linkmode=external"}
	add(spec{Go: installedGo, GOOS: "linux", GOARCH: "amd64", Variant: "pie", Flags: pie})
	add(spec{Go: installedGo, GOOS: "linux", GOARCH: "amd64", Variant: "cgo-extlink", Flags: extlink, Cgo: "1", Tags: "gosymcgo"})
	add(spec{Go: installedGo, GOOS: "linux", GOARCH: "amd64", Variant: "stripped", Flags: []string{"-ldflags=-s -w"}})
	add(spec{Go: "go1.20.14", GOOS: "linux", GOARCH: "amd64", Variant: "cgo-extlink", Flags: extlink, Cgo: "1", Tags: "gosymcgo"})
	add(spec{Go: "go1.20.14", GOOS: "linux", GOARCH: "amd64", Variant: "pie", Flags: pie})
	// Old releases, cross.
	add(spec{Go: "go1.16.15", GOOS: "windows", GOARCH: "amd64", Cgo: "0"})
	add(spec{Go: "go1.16.15", GOOS: "darwin", GOARCH: "amd64", Cgo: "0"})
	add(spec{Go: "go1.12.17", GOOS: "linux", GOARCH: "386", Cgo: "0"})
	add(spec{Go: "go1.18.10", GOOS: "linux", GOARCH: "arm64", Cgo: "0"})
	return m
}
