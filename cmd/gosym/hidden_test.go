package main

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/objtest"
)

// TestInfoGarbled checks that info says what was repaired in a binary
// transformed as garble's linker does (random magic, each record's entry
// offset XORed with its name offset × key), and how much was validated.
func TestInfoGarbled(t *testing.T) {
	bin := slices.Clone(objtest.Binary(t, objtest.LinuxStripped))
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(".gopclntab")
	bo := f.ByteOrder
	tab := bin[s.Offset : s.Offset+s.Size]
	// A 1.20+ header: magic, 4 bytes, then nfunc and 7 more words of 8
	// bytes; pcln is the last.
	nfunc := bo.Uint64(tab[8:])
	pcln := bo.Uint64(tab[8+7*8:])
	const key = 0x23375875
	for i := uint64(0); i < nfunc; i++ {
		rec := tab[pcln+uint64(bo.Uint32(tab[pcln+i*8+4:])):]
		bo.PutUint32(rec, bo.Uint32(rec)^bo.Uint32(rec[4:])*key)
	}
	bo.PutUint32(tab, 0xceaaf491)
	path := filepath.Join(t.TempDir(), "garbled")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	in := infoOf(t, path)
	if in.Magic != "0xceaaf491" || in.EntryKey != "0x23375875" || !strings.Contains(in.Repairs, "unknown magic") ||
		!strings.Contains(in.FoundBy, "magic unknown") || !strings.Contains(in.Validated, "under the entry key") {
		t.Errorf("info -json: %+v", in)
	}
	text := mustRun(t, "", "info", path)
	for _, want := range []string{"repaired:", "garble", "validated:", "64 of"} {
		if !strings.Contains(text, want) {
			t.Errorf("info does not say %q:\n%s", want, text)
		}
	}
}
