package main

import (
	"strings"

	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// spec is one binary of the matrix.
type spec struct {
	Go      string // release, e.g. "go1.26.8"
	GOOS    string
	GOARCH  string
	Variant string // see the variants below
	Flags   []string
	Cgo     string // CGO_ENABLED value, "" for the release's default
	Tags    string
	Env     []string // more environment variables for go build
}

// Variants.
const (
	vDefault  = "default"     // go build
	vStripped = "stripped"    // -ldflags=-s -w
	vPIE      = "pie"         // -buildmode=pie
	vCgo      = "cgo-extlink" // CGO_ENABLED=1 -tags gosymcgo -ldflags=-linkmode=external
	vTrimpath = "trimpath"    // -trimpath
	vNoDWARF  = "nodwarf"     // -ldflags=-w: symbols kept, DWARF left out (compact set only)
)

func (s spec) name() string {
	n := s.Go + "." + s.GOOS + "-" + s.GOARCH
	if s.Variant != vDefault {
		n += "." + s.Variant
	}
	return n
}

func (s spec) minor() int { return testcorpus.MinorVersion(s.Go) }

// group is the key of the entries built one after the other by one worker:
// they share the compiled runtime (build cache, or -pkgdir before 1.10).
func (s spec) group() string { return s.Go + " " + s.GOOS + "/" + s.GOARCH }

// runnable tells whether this machine (linux/amd64) runs the binary: its
// own, and linux/386 ones where the kernel runs them; where it does not
// (no IA-32 emulation), qemu-i386 runs them (internal/hostrun) from Go 1.9
// on, whose runtimes start threads there (Go 1.5 and 1.8 fail in clone
// with EINVAL under qemu-i386 7.2).
func (s spec) runnable() bool {
	return s.GOOS == "linux" && (s.GOARCH == "amd64" ||
		s.GOARCH == "386" && testcorpus.Runs386(s.minor()))
}

// selfReports tells whether the builder records the runtime's self-report:
// for every binary this machine runs except stripped twins, which are
// compared with their unstripped twin at every PC instead (the runtime's
// answers are the twin's: same text, same pclntab).
func (s spec) selfReports() bool {
	return s.runnable() && s.Variant != vStripped
}

// fingerprint identifies how the entry is built; an entry whose
// fingerprint changed is rebuilt.
func (s spec) fingerprint(mode string) string {
	f := []string{s.Go, s.GOOS, s.GOARCH, s.Variant, strings.Join(s.Flags, " "), "cgo=" + s.Cgo, "tags=" + s.Tags, mode, "src=" + srcHash, "layout=" + layoutVersion}
	if len(s.Env) > 0 {
		f = append(f, "env="+strings.Join(s.Env, " "))
	}
	if s.selfReports() {
		f = append(f, "report=2") // the self-report is stored in format 2
	}
	return strings.Join(f, "|")
}

// layoutVersion changes when the way binaries are built changes in a way
// that changes them (work paths, go.mod handling).
const layoutVersion = "2"

// srcHash is set to a hash of testdata/src at start-up.
var srcHash string

// releases are the Go releases of the matrix: 1.2.2, 1.5.4, 1.8.7 and the
// last patch release of every minor from 1.9 on.
var releases = []string{
	"go1.2.2", "go1.5.4", "go1.8.7", "go1.9.7", "go1.10.8", "go1.11.13",
	"go1.12.17", "go1.13.15", "go1.14.15", "go1.15.15", "go1.16.15",
	"go1.17.13", "go1.18.10", "go1.19.13", "go1.20.14", "go1.21.13",
	"go1.22.12", "go1.23.12", "go1.24.13", "go1.25.14", "go1.26.8",
	"go1.27.4",
}

// target is an operating system and architecture with the first minor
// release that builds it here.
type target struct {
	goos, goarch string
	since        int
}

// targets are the matrix's targets other than linux/amd64, in matrix
// order. Go 1.2–1.4 cannot cross-compile from a binary distribution (the
// compilers are per-architecture host programs, 6g/8g/5g, and the
// runtime's generated files exist only for the distribution's own
// target), and the module proxy has only the linux-amd64 toolchain of
// go1.2.2, so its only target is linux/amd64. Other first releases: arm64
// and ppc64 1.5, s390x 1.7, riscv64 1.14, darwin/arm64 (macOS, not iOS)
// 1.16, aix/ppc64 (XCOFF) 1.12. Every release of the matrix from 1.5 on
// builds plan9/386 and plan9/amd64 (checked: go tool dist list, and the
// builds).
var targets = []target{
	{"linux", "386", 5},
	{"linux", "arm", 5},
	{"linux", "arm64", 5},
	{"linux", "ppc64", 5},
	{"linux", "s390x", 7},
	{"linux", "riscv64", 14},
	{"darwin", "amd64", 5},
	{"darwin", "arm64", 16},
	{"windows", "amd64", 5},
	{"windows", "386", 5},
	{"plan9", "amd64", 5},
	{"plan9", "386", 5},
	{"aix", "ppc64", 12},
}

var (
	flagsStripped = []string{"-ldflags=-s -w"}
	flagsPIE      = []string{"-buildmode=pie"}
	flagsExtlink  = []string{"-ldflags=-linkmode=external"}
	flagsTrimpath = []string{"-trimpath"}
	flagsNoDWARF  = []string{"-ldflags=-w"}
)

// linuxAMD64 returns the linux/amd64 builds of release v in matrix order.
func linuxAMD64(v string) []spec {
	minor := testcorpus.MinorVersion(v)
	s := spec{Go: v, GOOS: "linux", GOARCH: "amd64"}
	out := []spec{with(s, vDefault, nil), with(s, vStripped, flagsStripped)}
	if minor >= 6 {
		out = append(out, with(s, vPIE, flagsPIE))
	}
	out = append(out, cgoExtlink(v))
	if minor >= 13 {
		out = append(out, with(s, vTrimpath, flagsTrimpath))
	}
	return out
}

// cgoExtlink returns the cgo variant of v: external linking with gcc.
// Go 1.2–1.5 predate gcc's default -pie (Debian/Ubuntu): their "ld -r" of
// the cgo objects and the final link need -no-pie.
func cgoExtlink(v string) spec {
	s := spec{Go: v, GOOS: "linux", GOARCH: "amd64", Variant: vCgo, Flags: flagsExtlink, Cgo: "1", Tags: "gosymcgo"}
	if testcorpus.MinorVersion(v) < 6 {
		s.Flags = []string{"-ldflags=-linkmode=external -extldflags=-no-pie"}
		s.Env = []string{"CGO_LDFLAGS=-no-pie"}
	}
	return s
}

// cross returns the default and stripped builds of v for t. On aix the
// default build only: without symbols the linker lays out the text
// differently, so a stripped build is no twin to compare at every PC
// (cmd/gosym's TestAddr2lineGoToolAIX compares it by function instead).
func cross(v string, t target) []spec {
	s := spec{Go: v, GOOS: t.goos, GOARCH: t.goarch, Cgo: "0"}
	if t.goos == "aix" {
		return []spec{with(s, vDefault, nil)}
	}
	return []spec{with(s, vDefault, nil), with(s, vStripped, flagsStripped)}
}

func with(s spec, variant string, flags []string) spec {
	s.Variant, s.Flags = variant, flags
	return s
}

// fullMatrix returns every entry of the matrix: for each release,
// linux/amd64 (default, stripped, pie, cgo-extlink, trimpath, each where
// the release has it), then every other target it supports, default and
// stripped.
func fullMatrix() []spec {
	var m []spec
	for _, v := range releases {
		m = append(m, linuxAMD64(v)...)
		for _, t := range targets {
			if testcorpus.MinorVersion(v) >= t.since {
				m = append(m, cross(v, t)...)
			}
		}
	}
	return m
}

// compactSet returns the committed corpus (testdata/corpus) in priority
// order: when the size budget is exceeded, entries are dropped from the
// end. See testdata/corpus/README.md for why each entry is there.
func compactSet() []spec {
	var m []spec
	add := func(v, goos, goarch, variant string) {
		s := spec{Go: v, GOOS: goos, GOARCH: goarch, Variant: variant}
		if goos != "linux" || goarch != "amd64" {
			s.Cgo = "0"
		}
		switch variant {
		case vStripped:
			s.Flags = flagsStripped
		case vPIE:
			s.Flags = flagsPIE
		case vCgo:
			s = cgoExtlink(v)
		case vTrimpath:
			s.Flags = flagsTrimpath
		case vNoDWARF:
			s.Flags = flagsNoDWARF
		}
		m = append(m, s)
	}
	for _, c := range compact {
		add(c[0], c[1], c[2], c[3])
	}
	return m
}

// compact lists the committed entries: release, GOOS, GOARCH, variant.
var compact = [][4]string{
	// linux/amd64, every release, with its self-report (every PC). DWARF
	// is kept where it tells more than the self-report: in 1.12–1.22 the
	// runtime reports only the innermost frame and DWARF has the outer
	// ones (kept in one release per pclntab magic of that span: 1.12,
	// 1.16, 1.18, 1.20); 1.11 (DWARF's first inlining, with its nested
	// inlining quirk) and 1.26 (the installed release, the reference of
	// package lidia's tests) keep it too. Before 1.11 DWARF has no
	// inlining and from 1.23 the self-report has the whole stack: there
	// DWARF would repeat the self-report, and the entries are built with
	// -ldflags=-w (symbols kept), about half the size.
	{"go1.2.2", "linux", "amd64", vDefault},
	{"go1.11.13", "linux", "amd64", vDefault},
	{"go1.12.17", "linux", "amd64", vDefault},
	{"go1.16.15", "linux", "amd64", vDefault},
	{"go1.18.10", "linux", "amd64", vDefault},
	{"go1.20.14", "linux", "amd64", vDefault},
	{"go1.26.8", "linux", "amd64", vDefault},
	{"go1.5.4", "linux", "amd64", vNoDWARF},
	{"go1.8.7", "linux", "amd64", vNoDWARF},
	{"go1.9.7", "linux", "amd64", vNoDWARF},
	{"go1.10.8", "linux", "amd64", vNoDWARF},
	{"go1.13.15", "linux", "amd64", vNoDWARF},
	{"go1.14.15", "linux", "amd64", vNoDWARF},
	{"go1.15.15", "linux", "amd64", vNoDWARF},
	{"go1.17.13", "linux", "amd64", vNoDWARF},
	{"go1.19.13", "linux", "amd64", vNoDWARF},
	{"go1.21.13", "linux", "amd64", vNoDWARF},
	{"go1.22.12", "linux", "amd64", vNoDWARF},
	{"go1.23.12", "linux", "amd64", vNoDWARF},
	{"go1.24.13", "linux", "amd64", vNoDWARF},
	{"go1.25.14", "linux", "amd64", vNoDWARF},
	{"go1.27.4", "linux", "amd64", vNoDWARF},
	// Every object format, 32-bit and big-endian, every pclntab magic
	// outside ELF/amd64, by old releases (the installed release's cross
	// builds are made at test time). DWARF only from 1.12 on, where it
	// has the inline stacks no self-report gives for these targets.
	{"go1.9.7", "plan9", "386", vDefault},        // Plan 9 (no DWARF ever), fb, 32-bit
	{"go1.8.7", "darwin", "amd64", vNoDWARF},     // Mach-O, fb
	{"go1.5.4", "windows", "386", vNoDWARF},      // PE, fb, 32-bit
	{"go1.10.8", "linux", "ppc64", vNoDWARF},     // big-endian, fb, quantum 4
	{"go1.12.17", "linux", "386", vNoDWARF},      // 32-bit ELF with the runtime's self-report
	{"go1.16.15", "windows", "amd64", vDefault},  // PE with DWARF, fa
	{"go1.16.15", "windows", "amd64", vStripped}, // its stripped twin (pclntab by scan)
	{"go1.17.13", "linux", "s390x", vDefault},    // big-endian with DWARF, fa, quantum 2
	{"go1.18.10", "darwin", "arm64", vNoDWARF},   // Mach-O arm64, f0
	{"go1.19.13", "plan9", "amd64", vDefault},    // Plan 9, f0
	{"go1.21.13", "linux", "arm", vNoDWARF},      // 32-bit ARM, f1
	{"go1.14.15", "linux", "riscv64", vNoDWARF},  // riscv64's first release
	{"go1.22.12", "linux", "amd64", vPIE},        // PIE before 1.25: no .gopclntab section
}
