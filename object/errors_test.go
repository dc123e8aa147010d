package object_test

import (
	"errors"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/object"
)

// TestFormatError checks that damage is reported as an *object.FormatError
// naming the format: each test program is cut in half, so that either
// NewBytes fails or a section reaches beyond the file, whose SectionData
// then fails with the section's offset.
func TestFormatError(t *testing.T) {
	formats := map[string]string{"linux": "elf", "darwin": "macho", "windows": "pe", "plan9": "plan9", "aix": "xcoff", "js": "wasm"}
	targets := []objtest.Target{objtest.LinuxAMD64, objtest.DarwinARM64, objtest.WindowsAMD64, objtest.Plan9AMD64, objtest.AIXPPC64, objtest.JSWasm}
	objtest.Run(t, targets, func(t *testing.T, tg objtest.Target, data []byte) {
		format := formats[tg.GOOS]
		check := func(what string, err error, off int64) {
			t.Helper()
			var fe *object.FormatError
			if !errors.As(err, &fe) || fe.Format != format || off >= 0 && fe.Offset != off {
				t.Errorf("%s: %v (%T); want an *object.FormatError of format %q, offset %d", what, err, err, format, off)
			}
		}
		half := data[:len(data)/2]
		obj, err := object.NewBytes(half)
		if err != nil {
			check("NewBytes", err, -1)
			return
		}
		hs, _ := obj.Sections()
		beyond := 0
		for i, h := range hs {
			if h.FileSize == 0 || h.Offset+h.FileSize <= uint64(len(half)) {
				continue
			}
			beyond++
			_, err := obj.SectionData(i)
			check("SectionData", err, int64(h.Offset))
		}
		if beyond == 0 {
			t.Errorf("no section of the half file reaches beyond it")
		}
	})
}
