// Package fuzzseed keeps the seed corpora of the repository's fuzz targets
// as files under each package's testdata/fuzz, where go test runs them as
// regression cases and go test -fuzz starts from them.
//
// A fuzz target passes its generated seeds (built from the corpus or from
// freshly built binaries) to [Add]. Running the tests with
// GOSYM_WRITE_SEEDS=1 also writes each seed to
// testdata/fuzz/<FuzzName>/seed-<hash>, in the "go test fuzz v1" encoding;
// commit the files. Seeds cut from binaries built at test time differ from
// one toolchain (and one build directory) to the next, so each rewrite adds
// files rather than replacing them: delete the old seed-* files first.
// Inputs the fuzzer found interesting can be copied from
// $(go env GOCACHE)/fuzz into the same directories.
package fuzzseed

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Header is the first line of every corpus file.
const Header = "go test fuzz v1\n"

// Add adds vals to the seed corpus of f and, with GOSYM_WRITE_SEEDS=1 in the
// environment, writes them to testdata/fuzz/<f.Name()> of the package under
// test. The values may be []byte, string, uint8, uint32, uint64 or bool.
func Add(f *testing.F, vals ...any) {
	f.Helper()
	f.Add(vals...)
	if os.Getenv("GOSYM_WRITE_SEEDS") != "1" {
		return
	}
	data, err := Marshal(vals...)
	if err != nil {
		f.Fatal(err)
	}
	dir := filepath.Join("testdata", "fuzz", f.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	sum := sha256.Sum256(data)
	name := filepath.Join(dir, fmt.Sprintf("seed-%x", sum[:8]))
	if err := os.WriteFile(name, data, 0o644); err != nil {
		f.Fatal(err)
	}
}

// Marshal encodes vals as a corpus file, the way go test writes the
// inputs it finds.
func Marshal(vals ...any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(Header)
	for _, v := range vals {
		switch v := v.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		case uint8:
			fmt.Fprintf(&b, "byte(%q)\n", v)
		case uint32, uint64, bool:
			fmt.Fprintf(&b, "%T(%v)\n", v, v)
		case string:
			fmt.Fprintf(&b, "string(%q)\n", v)
		default:
			return nil, fmt.Errorf("fuzzseed: cannot encode a %T", v)
		}
	}
	return b.Bytes(), nil
}
