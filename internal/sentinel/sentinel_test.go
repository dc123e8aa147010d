package sentinel

import (
	"errors"
	"io/fs"
	"testing"
)

func TestNew(t *testing.T) {
	err := New("x: reader is closed", fs.ErrClosed)
	if err.Error() != "x: reader is closed" || !errors.Is(err, fs.ErrClosed) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("New: %v", err)
	}
	if New("a", fs.ErrClosed) == New("a", fs.ErrClosed) {
		t.Error("two sentinels are equal")
	}
}
