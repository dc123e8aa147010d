package mmapfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("gosym"), 10000)
	full := filepath.Join(dir, "full")
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(full, want, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	data, unmap, err := Load(full)
	if err != nil || !bytes.Equal(data, want) {
		t.Fatalf("Load of a file: %d bytes, %v", len(data), err)
	}
	if runtime.GOOS == "linux" && unmap == nil {
		t.Error("a regular file was read, not mapped")
	}
	if unmap != nil {
		if err := unmap(); err != nil {
			t.Error(err)
		}
	}

	// An empty file cannot be mapped: it is read.
	if data, unmap, err := Load(empty); err != nil || len(data) != 0 || unmap != nil {
		t.Errorf("Load of an empty file: %d bytes, unmap %v, %v", len(data), unmap != nil, err)
	}
	if _, _, err := Load(dir); err == nil {
		t.Error("Load of a directory: no error")
	}
	if _, _, err := Load(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing file: %v", err)
	}
}
