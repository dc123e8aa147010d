package buildinfo

import (
	"encoding/binary"
	"strings"

	"github.com/gosym-dev/gosym/object"
)

// producersVersion returns the Go release a WebAssembly module names in
// its "producers" custom section (the tool-conventions format: fields,
// each a name and a list of (value, version) pairs), where the Go linker
// writes the field "language" with the value "Go" and the release as its
// version. It is the only place a Go module keeps its release: the linker
// writes no build info for wasm. "" if there is none.
func producersVersion(obj object.Object, secs []object.SectionHeader) string {
	d, ok := obj.(object.Describer)
	if !ok || d.Format() != "wasm" {
		return ""
	}
	for i, s := range secs {
		if s.Name != "producers" {
			continue
		}
		b, err := obj.SectionData(i)
		if err != nil {
			return ""
		}
		return goProducer(b)
	}
	return ""
}

// goProducer decodes the producers section b.
func goProducer(b []byte) string {
	uleb := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return v
	}
	name := func() string {
		n := uleb()
		if n > uint64(len(b)) {
			b = nil
			return ""
		}
		s := string(b[:n])
		b = b[n:]
		return s
	}
	for nfields := uleb(); nfields > 0 && len(b) > 0; nfields-- {
		field := name()
		for nvals := uleb(); nvals > 0 && len(b) > 0; nvals-- {
			value, version := name(), name()
			if field == "language" && value == "Go" && strings.HasPrefix(version, "go") {
				// A development toolchain may add build details
				// after a space.
				version, _, _ = strings.Cut(version, " ")
				return version
			}
		}
	}
	return ""
}
