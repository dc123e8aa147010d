package gosym

import (
	"fmt"
	"strings"
)

// Info describes a Table: the layout of its pclntab and where it was found.
type Info struct {
	// Version names the pclntab layout by the releases that write it:
	// "1.2", "1.16", "1.18" or "1.20" (used by every release since).
	Version   string
	Magic     uint32 // the pclntab's first word, as stored (garble's is random)
	PtrSize   int    // 4 or 8
	Quantum   int    // instruction size unit: 1, 2 or 4
	BigEndian bool

	PclntabAddr uint64 // link-time address of the pclntab
	PclntabSize uint64 // bytes from its header to the end of what holds it
	// TextStart and TextEnd bound the functions: the first entry and the
	// end of the last function.
	TextStart, TextEnd uint64
	NumFuncs           int // entries of the function table
	NumFiles           int // entries of the file table

	// FoundBy says how the pclntab was found: "section .gopclntab",
	// "symbol runtime.pclntab", "scan of section .rdata", ...
	FoundBy string
	// ModuledataFoundBy says how the moduledata (Go 1.18+) was found;
	// "" when it was not needed.
	ModuledataFoundBy string

	// Repairs says what was read differently from a Go linker's output,
	// each checked against the table's own structure, separated by "; ":
	// an unknown magic read as the Go 1.20 layout (or 1.18's, when the
	// records' sizes are 1.18's), a header without its textStart word,
	// garble's XORed entry offsets. "" for a table as a linker wrote it.
	Repairs string
	// EntryKey is garble's key (each function record stores its entry
	// offset XORed with its name offset times the key); 0 if none.
	EntryKey uint32
	// Validated says what was checked when the table was opened.
	Validated string
}

// Info describes the table.
func (t *Table) Info() Info {
	in := Info{
		Magic:             t.hdr.stored,
		PtrSize:           t.hdr.rd.ptrSize,
		Quantum:           int(t.hdr.quantum),
		BigEndian:         t.hdr.rd.bigEndian,
		PclntabAddr:       t.addr,
		PclntabSize:       uint64(len(t.data)),
		NumFuncs:          int(t.hdr.nfunc),
		FoundBy:           t.foundBy.pclntab,
		ModuledataFoundBy: t.foundBy.moduledata,
		Repairs:           strings.Join(t.repairs(), "; "),
		EntryKey:          t.hdr.entryKey,
		Validated:         t.validated(),
	}
	switch t.hdr.magic {
	case magic12:
		in.Version = "1.2"
	case magic116:
		in.Version = "1.16"
	case magic118:
		in.Version = "1.18"
	default:
		in.Version = "1.20"
	}
	if t.hdr.magic != magic12 {
		in.NumFiles = int(t.hdr.nfiles)
	} else if n, ok := t.hdr.rd.u32At(t.hdr.filetab, 0); ok && n > 0 {
		// The count includes the unused entry 0 from Go 1.8 (FORMAT.md, "Old file table").
		in.NumFiles = int(n)
		if t.layout.minor >= 8 {
			in.NumFiles--
		}
	}
	if t.hdr.nfunc > 0 {
		in.TextStart, in.TextEnd = t.entryAt(0), t.entryAt(t.hdr.nfunc)
	}
	return in
}

// String formats the magic as the runtime's source does.
func (in Info) String() string {
	return fmt.Sprintf("pclntab %s (magic %#x, ptrsize %d, quantum %d)", in.Version, in.Magic, in.PtrSize, in.Quantum)
}
