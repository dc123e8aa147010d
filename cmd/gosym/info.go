package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/gosym-dev/gosym/object"
)

// infoJSON is the output of info -json; the field names are documented in
// the command doc.
type infoJSON struct {
	File              string `json:"file"`
	Format            string `json:"format"`
	Arch              string `json:"arch"`
	GoVersion         string `json:"go_version"`
	PclntabVersion    string `json:"pclntab_version"`
	Magic             string `json:"magic"`
	PtrSize           int    `json:"ptr_size"`
	Quantum           int    `json:"quantum"`
	ByteOrder         string `json:"byte_order"`
	PclntabAddr       string `json:"pclntab_addr"`
	PclntabSize       uint64 `json:"pclntab_size"`
	FoundBy           string `json:"found_by"`
	ModuledataFoundBy string `json:"moduledata_found_by"`
	Repairs           string `json:"repairs"`
	EntryKey          string `json:"entry_key,omitempty"`
	Validated         string `json:"validated"`
	Functions         int    `json:"functions"`
	Files             int    `json:"files"`
	TextStart         string `json:"text_start"`
	TextEnd           string `json:"text_end"`
	Symbols           bool   `json:"symbols"`
	DWARF             bool   `json:"dwarf"`
	Stripped          bool   `json:"stripped"`
}

func runInfo(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("info")
	jsonOut := f.Bool("json", false, "write a JSON object (its fields are listed above)")
	b, _, status := f.open(args, 1, 1, stdout, stderr)
	if b == nil {
		return status
	}
	defer b.Close()

	in := b.tab.Info()
	j := infoJSON{
		File:              b.path,
		Format:            b.obj.Format(),
		Arch:              b.obj.Arch(),
		GoVersion:         b.tab.GoVersion(),
		PclntabVersion:    in.Version,
		Magic:             fmt.Sprintf("%#x", in.Magic),
		PtrSize:           in.PtrSize,
		Quantum:           in.Quantum,
		ByteOrder:         "little",
		PclntabAddr:       hex(in.PclntabAddr),
		PclntabSize:       in.PclntabSize,
		FoundBy:           in.FoundBy,
		ModuledataFoundBy: in.ModuledataFoundBy,
		Repairs:           in.Repairs,
		Validated:         in.Validated,
		Functions:         in.NumFuncs,
		Files:             in.NumFiles,
		TextStart:         hex(in.TextStart),
		TextEnd:           hex(in.TextEnd),
		Symbols:           hasSymbols(b.obj),
		DWARF:             hasDWARF(b.obj),
	}
	j.Stripped = !j.Symbols
	if in.EntryKey != 0 {
		j.EntryKey = fmt.Sprintf("%#x", in.EntryKey)
	}
	if in.BigEndian {
		j.ByteOrder = "big"
	}
	if *jsonOut {
		enc := newJSONLines(stdout)
		enc.enc.SetIndent("", "  ")
		if err := enc.write(j); err != nil {
			return errorf(stderr, "%v", err)
		}
		return exitOK
	}
	yesNo := map[bool]string{true: "yes", false: "no"}
	orUnknown := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	tw := tabwriter.NewWriter(stdout, 0, 8, 1, ' ', 0)
	fmt.Fprintf(tw, "file:\t%s\n", j.File)
	fmt.Fprintf(tw, "format:\t%s\n", j.Format)
	fmt.Fprintf(tw, "arch:\t%s\n", orUnknown(j.Arch))
	fmt.Fprintf(tw, "go version:\t%s\n", orUnknown(j.GoVersion))
	fmt.Fprintf(tw, "pclntab:\tGo %s layout (magic %s, pointer size %d, quantum %d, %s-endian)\n",
		j.PclntabVersion, j.Magic, j.PtrSize, j.Quantum, j.ByteOrder)
	fmt.Fprintf(tw, "pclntab at:\t%s, %d bytes\n", j.PclntabAddr, j.PclntabSize)
	fmt.Fprintf(tw, "pclntab found by:\t%s\n", j.FoundBy)
	if j.ModuledataFoundBy != "" {
		fmt.Fprintf(tw, "moduledata found by:\t%s\n", j.ModuledataFoundBy)
	}
	if j.Repairs != "" {
		fmt.Fprintf(tw, "repaired:\t%s\n", j.Repairs)
	}
	fmt.Fprintf(tw, "validated:\t%s\n", j.Validated)
	fmt.Fprintf(tw, "functions:\t%d\n", j.Functions)
	fmt.Fprintf(tw, "files:\t%d\n", j.Files)
	fmt.Fprintf(tw, "text:\t%s-%s (%d bytes)\n", j.TextStart, j.TextEnd, in.TextEnd-in.TextStart)
	fmt.Fprintf(tw, "symbols:\t%s\n", yesNo[j.Symbols])
	fmt.Fprintf(tw, "dwarf:\t%s\n", yesNo[j.DWARF])
	fmt.Fprintf(tw, "stripped:\t%s\n", yesNo[j.Stripped])
	if err := tw.Flush(); err != nil {
		return errorf(stderr, "%v", err)
	}
	return exitOK
}

// hasSymbols reports whether obj has a symbol table: whether it can look up
// one of the symbols every Go executable defines (runtime.text and
// runtime.pclntab; pclntab in Go 1.2; main.main). For ELF, only the static
// symbol table (.symtab) counts: the dynamic one (.dynsym), which the
// loader needs and "strip" and "-ldflags=-s" keep, holds every Go symbol in
// a program that imports package plugin.
func hasSymbols(obj *object.File) bool {
	if obj.Format() == "elf" && !hasSection(obj, ".symtab") {
		return false
	}
	for _, name := range []string{"runtime.text", "runtime.pclntab", "pclntab", "main.main"} {
		if _, err := obj.LookupSymbol(name); err == nil {
			return true
		}
	}
	return false
}

// hasSection reports whether obj has a section with one of the names.
func hasSection(obj object.Object, names ...string) bool {
	secs, err := obj.Sections()
	if err != nil {
		return false
	}
	for _, s := range secs {
		if slices.Contains(names, s.Name) {
			return true
		}
	}
	return false
}

// hasDWARF reports whether obj has DWARF debugging information.
func hasDWARF(obj object.Object) bool {
	return hasSection(obj, ".debug_info", ".zdebug_info", "__debug_info", "__zdebug_info", ".dwinfo")
}
