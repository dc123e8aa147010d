package gosym

import (
	"bytes"
	"debug/elf"
	"os"
	"testing"
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
