package alloctest

import "testing"

var sink []byte

func TestBytes(t *testing.T) {
	if n := Bytes(func() { sink = make([]byte, 1<<20) }); n < 1<<20 || n > 2<<20 {
		t.Errorf("Bytes of a 1 MiB allocation = %d", n)
	}
	if n := Bytes(func() {}); n > 1<<10 {
		t.Errorf("Bytes of nothing = %d", n)
	}
}
