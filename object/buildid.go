package object

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
)

// BuildIDs returns the two build IDs an executable may carry: gnu, the GNU
// build ID in lower-case hex (what `readelf -n`, `file` and profilers such
// as runtime/pprof report), and goID, the Go build ID as `go tool buildid`
// prints it ("actionID/contentID" since Go 1.10). Either is "" when the
// object has none; err is non-nil only when the object's sections cannot
// be read.
//
// Where they come from:
//
//   - The GNU build ID is the NT_GNU_BUILD_ID note of an ELF file (section
//     .note.gnu.build-id). The Go linker writes one only when asked
//     (-B) before Go 1.24, and by default since; external linkers usually
//     do.
//   - The Go build ID of an ELF file is its "Go" note of type 4 (section
//     .note.go.buildid). Other formats have no notes: the Go linker puts
//     the ID at the start of the text, as the string
//     "\xff Go build ID: \"...\"\n \xff", which is looked for in the
//     first 32 KiB of the first executable section, as the go command
//     itself does.
//
// An ELF file without section headers presents its segments, unnamed (see
// [Object]); its notes are then looked for, 4-byte aligned, in the first
// 4 KiB of each loadable segment, where linkers put them.
func BuildIDs(obj Object) (gnu, goID string, err error) {
	secs, err := obj.Sections()
	if err != nil {
		return "", "", err
	}
	order := obj.Endian()
	notes := false
	for i, s := range secs {
		if !strings.HasPrefix(s.Name, ".note") {
			continue
		}
		notes = true
		data, err := obj.SectionData(i)
		if err != nil {
			return "", "", err
		}
		g, o := readNotes(data, order, false)
		gnu, goID = cmp.Or(gnu, g), cmp.Or(goID, o)
	}
	if !notes && isELF(obj) {
		for i, s := range secs {
			if s.Name != "" || s.Flags&SectionAlloc == 0 || (gnu != "" && goID != "") {
				continue
			}
			data, err := obj.SectionData(i)
			if err != nil {
				return "", "", err
			}
			g, o := readNotes(data[:min(len(data), maxNoteScan)], order, true)
			gnu, goID = cmp.Or(gnu, g), cmp.Or(goID, o)
		}
	}
	if goID == "" && !isELF(obj) {
		goID, err = textBuildID(obj, secs)
	}
	return gnu, goID, err
}

// Note types and scan bounds.
const (
	noteGNUBuildID = 3 // NT_GNU_BUILD_ID, owner "GNU"
	noteGoBuildID  = 4 // the Go linker's build ID note, owner "Go"
	maxNoteScan    = 4 << 10
	maxTextScan    = 32 << 10
	maxBuildIDLen  = 1 << 10 // longer descriptors are not build IDs
)

// readNotes reads ELF notes (namesz, descsz, type, name, desc, each part
// padded to 4 bytes) from data and returns the GNU and Go build IDs among
// them. With scan set, data is a segment's start rather than a note
// section: a note is looked for at every 4-byte boundary, and only the two
// build ID notes are recognised.
func readNotes(data []byte, order binary.ByteOrder, scan bool) (gnu, goID string) {
	for off := 0; off+12 <= len(data); {
		namesz := uint64(order.Uint32(data[off:]))
		descsz := uint64(order.Uint32(data[off+4:]))
		typ := order.Uint32(data[off+8:])
		name := uint64(off + 12)
		desc := name + align4(namesz)
		end := desc + align4(descsz)
		if namesz > 64 || descsz > maxBuildIDLen || end > uint64(len(data)) {
			if scan {
				off += 4
				continue
			}
			return gnu, goID // truncated or not notes: keep what was found
		}
		owner := string(data[name : name+namesz])
		switch {
		case typ == noteGNUBuildID && owner == "GNU\x00" && descsz > 0:
			gnu = cmp.Or(gnu, hex.EncodeToString(data[desc:desc+descsz]))
		case typ == noteGoBuildID && owner == "Go\x00\x00" && descsz > 0:
			goID = cmp.Or(goID, string(data[desc:desc+descsz]))
		default:
			if scan {
				off += 4
				continue
			}
		}
		off = int(end)
	}
	return gnu, goID
}

func align4(n uint64) uint64 { return (n + 3) &^ 3 }

// The string the Go linker writes at the start of the text of non-ELF
// executables: goBuildPrefix, the ID quoted as by strconv.Quote (whose
// opening quote the prefix ends with), goBuildEnd.
var (
	goBuildPrefix = []byte("\xff Go build ID: \"")
	goBuildEnd    = []byte("\"\n \xff")
)

// textBuildID looks for the Go build ID string in the first maxTextScan
// bytes of the lowest executable section.
func textBuildID(obj Object, secs []SectionHeader) (string, error) {
	first := -1
	for i, s := range secs {
		if s.Flags&SectionExec != 0 && s.FileSize > 0 && (first < 0 || s.Addr < secs[first].Addr) {
			first = i
		}
	}
	if first < 0 {
		return "", nil
	}
	data, err := obj.SectionData(first)
	if err != nil {
		return "", err
	}
	data = data[:min(len(data), maxTextScan)]
	i := bytes.Index(data, goBuildPrefix)
	if i < 0 {
		return "", nil
	}
	rest := data[i+len(goBuildPrefix):]
	j := bytes.Index(rest[:min(len(rest), maxBuildIDLen)], goBuildEnd)
	if j < 0 {
		return "", nil
	}
	id, err := strconv.Unquote(string(data[i+len(goBuildPrefix)-1 : i+len(goBuildPrefix)+j+1]))
	if err != nil {
		return "", nil // not a quoted string: no build ID
	}
	return id, nil
}

// isELF reports whether obj says it is an ELF file.
func isELF(obj Object) bool {
	d, ok := obj.(Describer)
	return ok && d.Format() == "elf"
}
