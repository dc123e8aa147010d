package object_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/machoobj"
	"github.com/gosym-dev/gosym/object"
)

var allTargets = slices.Concat(objtest.ELF, objtest.MachO, objtest.PE, objtest.Plan9)

// wantFormat returns the format NewBytes must find for t.
func wantFormat(t objtest.Target) string {
	switch t.GOOS {
	case "linux":
		return "elf"
	case "darwin":
		return "macho"
	case "windows":
		return "pe"
	case "plan9":
		return "plan9"
	}
	panic("unknown target " + t.Name)
}

func TestNewBytes(t *testing.T) {
	objtest.Run(t, allTargets, func(t *testing.T, tg objtest.Target, data []byte) {
		obj, err := object.NewBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := obj.(*object.File); !ok {
			t.Errorf("NewBytes returned a %T, want *object.File", obj)
		}
		objtest.CheckTarget(t, obj, wantFormat(tg), tg)
		objtest.CheckBytes(t, data, obj)
	})
}

// TestOpen checks that Open gives what NewBytes gives, from a mapping, and
// what happens at Close.
func TestOpen(t *testing.T) {
	targets := []objtest.Target{objtest.LinuxAMD64, objtest.LinuxStripped, objtest.DarwinARM64, objtest.Windows386, objtest.Plan9AMD64}
	objtest.Run(t, targets, func(t *testing.T, tg objtest.Target, data []byte) {
		want, err := object.NewBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		f := openFile(t, data)
		if runtime.GOOS != "windows" && runtime.GOOS != "plan9" && !object.Mapped(f) {
			t.Error("file was read, not mapped")
		}
		objtest.CheckBytes(t, object.Data(f), f)
		wantHs, _ := want.Sections()
		objtest.CheckSections(t, f, wantHs)
		objtest.CompareData(t, f, want.SectionData)
		d := want.(object.Describer)
		if f.Format() != d.Format() || f.Arch() != d.Arch() || f.Endian() != want.Endian() {
			t.Errorf("Format, Arch, Endian = %q, %q, %v; want %q, %q, %v",
				f.Format(), f.Arch(), f.Endian(), d.Format(), d.Arch(), want.Endian())
		}
		for _, sym := range []string{"runtime.text", "main.work", "no.such.symbol"} {
			got, err := f.LookupSymbol(sym)
			w, werr := want.(object.SymbolLookup).LookupSymbol(sym)
			if got != w || (err == nil) != (werr == nil) {
				t.Errorf("LookupSymbol(%q) = %+v, %v; want %+v, %v", sym, got, err, w, werr)
			}
		}

		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Sections(); !errors.Is(err, fs.ErrClosed) {
			t.Errorf("Sections after Close: %v", err)
		}
		if _, err := f.SectionData(0); !errors.Is(err, fs.ErrClosed) {
			t.Errorf("SectionData after Close: %v", err)
		}
		if _, err := f.LookupSymbol("runtime.text"); !errors.Is(err, fs.ErrClosed) {
			t.Errorf("LookupSymbol after Close: %v", err)
		}
		n := 0
		for _, err := range f.Symbols() {
			if n++; !errors.Is(err, fs.ErrClosed) || n > 1 {
				t.Errorf("Symbols after Close: %v (%d)", err, n)
			}
		}
		if err := f.Close(); err != nil {
			t.Errorf("second Close: %v, want nil", err)
		}
		if f.Format() != d.Format() || f.Arch() != d.Arch() || f.Endian() != want.Endian() {
			t.Errorf("Format, Arch, Endian changed at Close")
		}
	})
}

// openFile writes data to a file in a temporary directory and opens it
// with Open.
func openFile(t *testing.T, data []byte) *object.File {
	t.Helper()
	name := filepath.Join(t.TempDir(), "obj")
	if err := os.WriteFile(name, data, 0o666); err != nil {
		t.Fatal(err)
	}
	f, err := object.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestNoSectionHeaders(t *testing.T) {
	f := openFile(t, objtest.StripSectionHeaders(t, objtest.Binary(t, objtest.LinuxARM64)))
	defer f.Close()
	hs, _ := f.Sections()
	if len(hs) == 0 {
		t.Fatal("no sections")
	}
	for _, h := range hs {
		if h.Name != "" || h.Flags&object.SectionAlloc == 0 {
			t.Errorf("segment %+v: want no name, SectionAlloc", h)
		}
	}
	if f.Arch() != "arm64" {
		t.Errorf("Arch() = %q", f.Arch())
	}
}

func TestFat(t *testing.T) {
	amd64 := objtest.Binary(t, objtest.DarwinAMD64)
	arm64 := objtest.Binary(t, objtest.DarwinARM64)
	for _, fat := range [][]byte{objtest.Fat(t, amd64, arm64), objtest.Fat64(t, arm64, amd64)} {
		files, err := machoobj.NewFat(fat)
		if err != nil {
			t.Fatal(err)
		}
		want := files[0].(object.Describer).Arch()
		if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
			want = runtime.GOARCH
		}
		obj, err := object.NewBytes(fat)
		if err != nil {
			t.Fatal(err)
		}
		if got := obj.(object.Describer).Arch(); got != want {
			t.Errorf("NewBytes of a universal file chose %s, want %s", got, want)
		}
		objtest.CheckBytes(t, fat, obj)

		f := openFile(t, fat)
		if f.Arch() != want || f.Format() != "macho" {
			t.Errorf("Open of a universal file chose %s %s, want macho %s", f.Format(), f.Arch(), want)
		}
		objtest.CheckBytes(t, object.Data(f), f)
		f.Close()

		for _, goarch := range []string{"amd64", "arm64", "riscv64"} {
			want := goarch
			if goarch == "riscv64" {
				want = files[0].(object.Describer).Arch()
			}
			if got := object.PickArch(fat, goarch); got != want {
				t.Errorf("pickArch(%s) = %s, want %s", goarch, got, want)
			}
		}
	}
}

func TestUnknownFormat(t *testing.T) {
	class := []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 0x34, 0, 0x20, 7, 0, 0, 0, 0, 0}
	for _, data := range [][]byte{nil, {}, {0x7f}, []byte("hello, world\n"), class, bytes.Repeat([]byte{0}, 100)} {
		if _, err := object.NewBytes(data); !errors.Is(err, object.ErrUnknownFormat) {
			t.Errorf("NewBytes(%q): %v, want ErrUnknownFormat", data, err)
		}
	}
	for data, want := range map[string]string{
		"":                     "object: unknown format (empty file; reads ELF, Mach-O, PE, Plan 9, XCOFF and WebAssembly)",
		"\x00":                 "object: unknown format (magic 00; reads ELF, Mach-O, PE, Plan 9, XCOFF and WebAssembly)",
		"\x7fEL":               "object: unknown format (magic 7f 45 4c; reads ELF, Mach-O, PE, Plan 9, XCOFF and WebAssembly)",
		"\x00\x01\x02\x03\x04": "object: unknown format (magic 00 01 02 03; reads ELF, Mach-O, PE, Plan 9, XCOFF and WebAssembly)",
		string(class):          "object: unknown format (magic ca fe ba be; reads ELF, Mach-O, PE, Plan 9, XCOFF and WebAssembly)",
	} {
		if _, err := object.NewBytes([]byte(data)); err == nil || err.Error() != want {
			t.Errorf("NewBytes(%q): %v, want %q", data, err, want)
		}
	}
	// Known magic, bad contents: an error, but not ErrUnknownFormat.
	for _, data := range [][]byte{[]byte("\x7fELF\x02\x01\x01"), []byte("MZ\x00\x00"), {0xfe, 0xed, 0xfa, 0xcf, 0}, {0, 0, 0x8a, 0x97}} {
		if _, err := object.NewBytes(data); err == nil || errors.Is(err, object.ErrUnknownFormat) {
			t.Errorf("NewBytes(%q): %v, want a format error", data, err)
		}
	}

	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	_, err := object.Open(empty)
	var pe *fs.PathError
	if !errors.Is(err, object.ErrUnknownFormat) || !errors.As(err, &pe) || pe.Path != empty {
		t.Errorf("Open of an empty file: %v, want a PathError wrapping ErrUnknownFormat", err)
	} else if want := "open " + empty + ": object: unknown format (empty file; reads ELF, Mach-O, PE, Plan 9, XCOFF and WebAssembly)"; err.Error() != want {
		t.Errorf("Open of an empty file: %q, want %q", err, want)
	}
	if _, err := object.Open(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing file: %v, want ErrNotExist", err)
	}
	if _, err := object.Open(dir); err == nil {
		t.Error("Open of a directory succeeded")
	}
}

// TestConcurrentClose checks that Close racing with readers neither crashes
// nor trips the race detector.
func TestConcurrentClose(t *testing.T) {
	f, err := object.Open(objtest.Path(t, objtest.LinuxAMD64))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, err1 := f.Sections()
				_, err2 := f.SectionData(1)
				_, err3 := f.LookupSymbol("runtime.text")
				if errors.Is(err1, fs.ErrClosed) && errors.Is(err2, fs.ErrClosed) && errors.Is(err3, fs.ErrClosed) {
					return
				}
			}
		}()
	}
	f.Close()
	wg.Wait()
}

func FuzzNewBytes(f *testing.F) {
	for _, tg := range []objtest.Target{objtest.LinuxAMD64, objtest.DarwinARM64, objtest.WindowsAMD64, objtest.Plan9386} {
		fuzzseed.Add(f, objtest.Mini(f, objtest.Binary(f, tg)))
	}
	amd64 := objtest.Mini(f, objtest.Binary(f, objtest.DarwinAMD64))
	arm64 := objtest.Mini(f, objtest.Binary(f, objtest.DarwinARM64))
	fuzzseed.Add(f, objtest.Fat(f, amd64, arm64))
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := object.NewBytes(data)
		if err != nil {
			return
		}
		if slices, err := machoobj.NewFat(data); err == nil {
			// A universal file: machoobj's fuzz target checks each
			// slice within its own bytes; here, the choice must be one.
			got, _ := obj.Sections()
			for _, s := range slices {
				if want, _ := s.Sections(); reflect.DeepEqual(got, want) {
					return
				}
			}
			t.Fatalf("object.NewBytes chose none of the %d slices", len(slices))
		}
		objtest.CheckBytes(t, data, obj)
	})
}
