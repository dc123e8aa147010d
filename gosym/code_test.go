package gosym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/gosym-dev/gosym/object"
)

// TestCode checks CodeEnd against Lines (the last range, without a file
// and a line, of a function of several ranges is padding) and Code against
// the bytes debug/elf reads from the test binary's sections.
func TestCode(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(exe)
	if err != nil {
		t.Skipf("not an ELF binary: %v", err)
	}
	defer ef.Close()
	text := ef.Section(".text")
	if text == nil {
		t.Skip("no .text")
	}
	textData, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	tab := selfTable(t)
	var lines []FunctionLine
	padded, checked := 0, 0
	for f, err := range tab.Functions() {
		if err != nil {
			t.Fatal(err)
		}
		if lines, err = f.Lines(lines); err != nil {
			t.Fatal(err)
		}
		want := f.End()
		if n := len(lines); n > 1 && lines[n-1].File == "" && lines[n-1].Line == 0 {
			want = lines[n-1].PCLo
		}
		if got := f.CodeEnd(); got != want {
			t.Fatalf("%s: CodeEnd %#x, want %#x (End %#x)", f.Name(), got, want, f.End())
		}
		if want < f.End() {
			padded++
		}
		if f.Entry() < text.Addr || want > text.Addr+text.Size {
			continue
		}
		code, err := f.Code()
		if err != nil {
			t.Fatalf("%s: Code: %v", f.Name(), err)
		}
		if !bytes.Equal(code, textData[f.Entry()-text.Addr:want-text.Addr]) {
			t.Fatalf("%s: Code differs from .text", f.Name())
		}
		checked++
	}
	if padded == 0 || checked == 0 {
		t.Fatalf("%d functions with padding, %d checked", padded, checked)
	}
	t.Logf("%d functions' code checked, %d with padding", checked, padded)
}

// TestCodePastSection shortens the test binary's .text in its section
// header so that it ends inside a function: Code of that function fails
// with ErrCorrupted (the function table puts code past the section), and
// Code of a function wholly inside the shortened section still answers.
func TestCodePastSection(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil || ef.Class != elf.ELFCLASS64 {
		t.Skipf("not a 64-bit ELF binary (%v)", err)
	}
	text := ef.Section(".text")
	if text == nil {
		t.Skip("no .text")
	}
	tab := selfTable(t)
	// The function a tenth of the way into .text, and the one before it.
	target, err := tab.ResolveFunction(text.Addr + text.Size/10)
	if err != nil {
		t.Fatal(err)
	}
	before, err := tab.ResolveFunction(target.Entry() - 1)
	if err != nil {
		t.Fatal(err)
	}
	// The new end falls one byte into target's code.
	newSize := target.Entry() + 1 - text.Addr
	var idx int
	for i, s := range ef.Sections {
		if s == text {
			idx = i
		}
	}
	// Elf64_Shdr: sh_size is at offset 32 of each 64-byte header.
	off := int(binary.LittleEndian.Uint64(bin[0x28:])) + idx*64 + 32
	bad := bytes.Clone(bin)
	ef.ByteOrder.PutUint64(bad[off:], newSize)
	obj, err := object.NewBytes(bad)
	if err != nil {
		t.Fatal(err)
	}
	btab, err := NewTable(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer btab.Close()
	f, err := btab.ResolveFunction(target.Entry())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Code(); !errors.Is(err, ErrCorrupted) {
		t.Errorf("Code of %s past the shortened .text: %v, want an error wrapping ErrCorrupted", f.Name(), err)
	}
	g, err := btab.ResolveFunction(before.Entry())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Code(); err != nil {
		t.Errorf("Code of %s inside the shortened .text: %v", g.Name(), err)
	}
}
