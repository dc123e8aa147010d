// Package budget holds the one bound the export formats' writers (lidia,
// gsym, symbfile) put on what they take from a binary: the bytes of names
// (and, in symbfile, the records) a sound binary can account for, so that
// a damaged name table, whose names run together when its NUL bytes are
// gone, makes Write fail instead of writing a file, and using memory, out
// of proportion with the binary.
package budget

import (
	"math"

	"github.com/gosym-dev/gosym/object"
)

// Names returns the most bytes of names a writer accepts from obj: twice
// the bytes its sections span in the file, and 1 MiB. A sound binary
// holds each name it has at least once (a Go function's name is in the
// pclntab, and usually in the symbol table too), so its names total at
// most its size; the margin is for names the sections leave out
// (Mach-O's symbol table lies outside them) and the tail-merged string
// tables of some linkers. Sections whose end overflows are ignored, and
// the span counts at most 4 GiB.
func Names(obj object.Object) uint64 {
	hs, _ := obj.Sections()
	var end uint64
	for _, h := range hs {
		if h.Offset+h.FileSize >= h.Offset {
			end = max(end, h.Offset+h.FileSize)
		}
	}
	return 2*min(end, math.MaxUint32) + 1<<20
}
