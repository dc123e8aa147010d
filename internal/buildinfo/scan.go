package buildinfo

import (
	"bytes"
	"strconv"

	"github.com/gosym-dev/gosym/object"
)

// ScanVersion looks for the release of a binary that has no build info
// (Go 1.12 and older) and no symbols: the bytes of runtime.buildVersion,
// "go1.N[.P]" (or "go1.N" with a beta or rc suffix), somewhere in its loaded
// data. Matches inside [skipAddr, skipAddr+skipLen), the pclntab, whose file
// paths may name a toolchain directory, are ignored, and so are releases
// outside [lo, hi]. The most frequent remaining match wins, read-only data
// first: code is searched only if the data has none (Go 1.2–1.6 keep their
// read-only data in the executable segment). "" if none.
func ScanVersion(obj object.Object, secs []object.SectionHeader, skipAddr, skipLen uint64, lo, hi int) string {
	for _, exec := range []bool{false, true} {
		if v := scanVersion(obj, secs, exec, skipAddr, skipLen, lo, hi); v != "" {
			return v
		}
	}
	return ""
}

func scanVersion(obj object.Object, secs []object.SectionHeader, exec bool, skipAddr, skipLen uint64, lo, hi int) string {
	counts := map[string]int{}
	best := ""
	for i, s := range secs {
		if s.Flags&object.SectionAlloc == 0 || s.FileSize == 0 || (s.Flags&object.SectionExec != 0) != exec {
			continue
		}
		data, err := obj.SectionData(i)
		if err != nil {
			continue
		}
		for off := 0; ; {
			j := bytes.Index(data[off:], []byte("go1."))
			if j < 0 {
				break
			}
			off += j
			addr := s.Addr + uint64(off)
			v := versionAt(data[off:])
			off += 4
			if v == "" || (addr >= skipAddr && addr < skipAddr+skipLen) {
				continue
			}
			if m := minorOf(v); m < lo || m > hi {
				continue
			}
			counts[v]++
			if counts[v] > counts[best] {
				best = v
			}
		}
	}
	return best
}

// versionAt returns the version string at the start of b ("go1.12.17",
// "go1.4", "go1.9beta2"), or "" if b does not start with one. The linker
// packs string data without separators, so any byte may follow, except
// those that would make it part of a path.
func versionAt(b []byte) string {
	n := len("go1.")
	digits := func() bool {
		start := n
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			n++
		}
		return n > start && n-start <= 2
	}
	if !digits() {
		return ""
	}
	if n < len(b) && b[n] == '.' {
		n++
		if !digits() {
			return ""
		}
	} else if bytes.HasPrefix(b[n:], []byte("beta")) || bytes.HasPrefix(b[n:], []byte("rc")) {
		n += bytes.IndexAny(b[n:], "0123456789")
		if !digits() {
			return ""
		}
	}
	if n < len(b) && (b[n] == '.' || b[n] == '/' || b[n] == '-') {
		return "" // part of a path or a longer name
	}
	return string(b[:n])
}

func minorOf(v string) int {
	s := v[len("go1."):]
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	m, _ := strconv.Atoi(s[:n])
	return m
}
