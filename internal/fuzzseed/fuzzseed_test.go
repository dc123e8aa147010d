package fuzzseed

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestMarshal(t *testing.T) {
	// A file go test -fuzz wrote for gosym's FuzzTable.
	want := "go test fuzz v1\nbyte('9')\nbyte('\\x00')\nuint32(25)\n[]byte(\"\\x01\")\nuint32(0)\n"
	got, err := Marshal(uint8('9'), uint8(0), uint32(25), []byte{1}, uint32(0))
	if err != nil || string(got) != want {
		t.Errorf("Marshal = %q, %v; want %q", got, err, want)
	}
	if _, err := Marshal(struct{}{}); err == nil {
		t.Error("Marshal of a struct: no error")
	}
}

// TestCommitted checks that every fuzz target of the module has a
// committed seed corpus.
func TestCommitted(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w*)\(f \*testing\.F\)`)
	targets := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range fuzzFunc.FindAllSubmatch(src, -1) {
			targets++
			dir := filepath.Join(filepath.Dir(path), "testdata", "fuzz", string(m[1]))
			files, _ := os.ReadDir(dir)
			n := 0
			for _, f := range files {
				data, err := os.ReadFile(filepath.Join(dir, f.Name()))
				if err != nil || !bytes.HasPrefix(data, []byte(Header)) {
					t.Errorf("%s: not a corpus file (%v)", filepath.Join(dir, f.Name()), err)
				}
				n++
			}
			if n == 0 {
				rel, _ := filepath.Rel(root, dir)
				t.Errorf("%s: no committed seeds (run the tests with GOSYM_WRITE_SEEDS=1)", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if targets < 8 {
		t.Errorf("found %d fuzz targets, want at least 8", targets)
	}
}
