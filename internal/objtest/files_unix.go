//go:build unix

package objtest

import (
	"net"
	"path/filepath"
	"syscall"
	"testing"
)

// special makes a FIFO and a Unix socket in dir.
func special(t *testing.T, dir string) []string {
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	names := []string{fifo}
	sock := filepath.Join(dir, "sock")
	if l, err := net.Listen("unix", sock); err == nil {
		t.Cleanup(func() { l.Close() })
		names = append(names, sock)
	}
	return names
}
