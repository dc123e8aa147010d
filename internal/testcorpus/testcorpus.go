// Package testcorpus gives tests access to the corpus of Go binaries in
// testdata/corpus: executables built from testdata/src by many Go
// releases for many targets, each with the runtime's own account of its
// PCs where the binary could be run (the "self-report").
//
// The corpus is produced by "go run ./internal/corpus"; its layout and
// the self-report format are described in testdata/corpus/README.md.
// This package uses only the standard library and none of the
// repository's readers, so tests can use it as an independent oracle.
package testcorpus

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// ManifestName is the name of the manifest file inside Dir().
const ManifestName = "manifest.json"

// Manifest is the content of manifest.json.
type Manifest struct {
	// Comment says what the file is.
	Comment string `json:"comment,omitempty"`
	// Source is the test program's directory, relative to the repository.
	Source string `json:"source,omitempty"`
	// Set is "compact" (the committed corpus) or "full" (the whole
	// matrix).
	Set string `json:"set,omitempty"`
	// BudgetBytes is the size budget the builder kept the corpus under
	// (0: none).
	BudgetBytes int64 `json:"budget_bytes"`
	// TotalBytes is the size of the committed files (the .gz files and
	// the manifest itself not counted).
	TotalBytes int64 `json:"total_bytes"`
	// Entries are the binaries, in the builder's priority order.
	Entries []Entry `json:"entries"`
	// Dropped lists matrix entries left out, and why.
	Dropped []Dropped `json:"dropped,omitempty"`
}

// Dropped is a matrix entry the builder left out of the corpus.
type Dropped struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
	// Bytes is its compressed size, when it was built.
	Bytes int64 `json:"bytes,omitempty"`
}

// Entry describes one binary of the corpus.
type Entry struct {
	// Name identifies the entry, e.g. "go1.26.8.linux-amd64" or
	// "go1.26.8.linux-amd64.pie".
	Name string `json:"name"`
	// GoVersion is the release that built it, e.g. "go1.26.8".
	GoVersion string `json:"go_version"`
	// GOOS and GOARCH are the target.
	GOOS   string `json:"goos"`
	GOARCH string `json:"goarch"`
	// Variant is "default", "pie", "cgo-extlink" or "stripped".
	Variant string `json:"variant"`
	// BuildMode is "module" or "gopath": how the go command was run.
	BuildMode string `json:"build_mode"`
	// BuildFlags are the flags passed to "go build" besides -o.
	BuildFlags []string `json:"build_flags,omitempty"`
	// CgoEnabled is the CGO_ENABLED setting ("" when left to the
	// default).
	CgoEnabled string `json:"cgo_enabled,omitempty"`

	// PclntabMagic is the pclntab magic in hex, e.g. "0xfffffff1",
	// read in the target's byte order.
	PclntabMagic string `json:"pclntab_magic"`
	// ByteOrder is "little" or "big".
	ByteOrder string `json:"byte_order"`
	// Quantum and PtrSize are header bytes 6 and 7.
	Quantum int `json:"quantum"`
	PtrSize int `json:"ptr_size"`
	// PclntabFoundBy says how the builder located the table: "symbol
	// runtime.pclntab", "section .gopclntab", "scan", ...
	PclntabFoundBy string `json:"pclntab_found_by"`
	// PclntabOffset is the table's file offset in the binary.
	PclntabOffset int64 `json:"pclntab_offset"`
	// HasDWARF tells whether the binary has DWARF sections.
	HasDWARF bool `json:"has_dwarf"`
	// HasSymbols tells whether the binary has a symbol table.
	HasSymbols bool `json:"has_symbols"`

	// BinaryFile is the gzip-compressed binary, relative to Dir().
	BinaryFile string `json:"binary"`
	// BinarySize and BinarySHA256 describe the uncompressed binary.
	BinarySize   int64  `json:"binary_size"`
	BinarySHA256 string `json:"binary_sha256"`
	// SelfReportFile is the gzip-compressed self-report, relative to
	// Dir(), or "" when the binary could not be run here.
	SelfReportFile string `json:"selfreport,omitempty"`
	// SelfReportMethod is the report's method line.
	SelfReportMethod string `json:"selfreport_method,omitempty"`
	// CompressedBytes is the size of the entry's files in the corpus.
	CompressedBytes int64 `json:"compressed_bytes"`
	// Spec fingerprints how the entry was built; the builder rebuilds an
	// entry whose spec changed.
	Spec string `json:"spec"`
}

// DirEnv names an environment variable that, when set, overrides Dir:
// for testing a corpus built elsewhere (e.g. the whole matrix with
// "go run ./internal/corpus -budget 0 -out /tmp/full").
const DirEnv = "GOSYM_CORPUS_DIR"

// Dir returns the absolute path of the corpus directory,
// testdata/corpus at the root of the repository, or $GOSYM_CORPUS_DIR.
func Dir() string {
	if d := os.Getenv(DirEnv); d != "" {
		return d
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return filepath.Join(root, "testdata", "corpus")
		}
	}
	// Built with -trimpath: walk up from the working directory.
	dir, err := os.Getwd()
	if err == nil {
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return filepath.Join(dir, "testdata", "corpus")
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return filepath.Join("testdata", "corpus")
}

// ReadManifest reads manifest.json.
func ReadManifest() (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(Dir(), ManifestName))
	if err != nil {
		return nil, err
	}
	m := new(Manifest)
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("testcorpus: %s: %v", ManifestName, err)
	}
	return m, nil
}

// Entries returns the corpus entries listed in the manifest.
func Entries() ([]Entry, error) {
	m, err := ReadManifest()
	if err != nil {
		return nil, err
	}
	return m.Entries, nil
}

// Magic returns PclntabMagic as a number.
func (e Entry) Magic() uint32 {
	v, _ := strconv.ParseUint(strings.TrimPrefix(e.PclntabMagic, "0x"), 16, 32)
	return uint32(v)
}

// Minor returns the minor release number of GoVersion (26 for
// "go1.26.8"), or -1.
func (e Entry) Minor() int {
	return MinorVersion(e.GoVersion)
}

// MinorVersion returns N of "go1.N..." or -1.
func MinorVersion(v string) int {
	s := strings.TrimPrefix(v, "go1.")
	if s == v {
		return -1
	}
	n := 0
	i := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if i == 0 {
		return -1
	}
	return n
}

// Binary returns the uncompressed binary.
func (e Entry) Binary() ([]byte, error) {
	return Gunzip(filepath.Join(Dir(), e.BinaryFile))
}

// SelfReport parses the entry's self-report. It returns an error if the
// entry has none.
func (e Entry) SelfReport() (*Report, error) {
	if e.SelfReportFile == "" {
		return nil, fmt.Errorf("testcorpus: %s has no self-report", e.Name)
	}
	data, err := Gunzip(filepath.Join(Dir(), e.SelfReportFile))
	if err != nil {
		return nil, err
	}
	r, err := ParseReport(data)
	if err != nil {
		return nil, fmt.Errorf("testcorpus: %s: %v", e.SelfReportFile, err)
	}
	return r, nil
}

// Gunzip reads a gzip-compressed file.
func Gunzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("testcorpus: %s: %v", path, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("testcorpus: %s: %v", path, err)
	}
	return data, nil
}

// Gzip compresses data deterministically (no name, no time) with the
// best compression.
func Gzip(data []byte) []byte {
	return GzipLevel(data, gzip.BestCompression)
}

// GzipLevel compresses data deterministically at the given level.
func GzipLevel(data []byte, level int) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, level)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}
