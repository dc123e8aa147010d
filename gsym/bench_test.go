package gsym

import (
	"io"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/lidia"
)

func BenchmarkWrite(b *testing.B) {
	tab, err := gosym.Open(toolBinary(b, "go"))
	if err != nil {
		b.Skip(err)
	}
	defer tab.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, tab); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLidiaWrite(b *testing.B) {
	tab, err := gosym.Open(toolBinary(b, "go"))
	if err != nil {
		b.Skip(err)
	}
	defer tab.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := lidia.Write(io.Discard, tab); err != nil {
			b.Fatal(err)
		}
	}
}
