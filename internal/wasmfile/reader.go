package wasmfile

import (
	"errors"
	"fmt"
)

// reader decodes the binary format's primitive values from data, starting
// at off. The first failure is kept in err; later reads return zeros.
type reader struct {
	data []byte
	off  uint64
	err  error
}

var errTruncated = errors.New("truncated")

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.off = uint64(len(r.data))
}

func (r *reader) byte() byte {
	if r.err != nil || r.off >= uint64(len(r.data)) {
		r.fail(errTruncated)
		return 0
	}
	b := r.data[r.off]
	r.off++
	return b
}

// uleb reads an unsigned LEB128 number of at most 64 bits.
func (r *reader) uleb() uint64 {
	var v uint64
	for shift := 0; ; shift += 7 {
		b := r.byte()
		if r.err != nil {
			return 0
		}
		if shift == 63 && b > 1 {
			r.fail(fmt.Errorf("LEB128 number at %#x overflows 64 bits", r.off-1))
			return 0
		}
		v |= uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			return v
		}
	}
}

// sleb reads a signed LEB128 number of at most 64 bits.
func (r *reader) sleb() int64 {
	var v int64
	shift := 0
	for {
		b := r.byte()
		if r.err != nil {
			return 0
		}
		if shift == 63 && b != 0 && b != 0x7f {
			r.fail(fmt.Errorf("LEB128 number at %#x overflows 64 bits", r.off-1))
			return 0
		}
		v |= int64(b&0x7f) << shift
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

// bytes returns the next n bytes, a subslice of data.
func (r *reader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.data))-r.off {
		r.fail(fmt.Errorf("%d bytes at %#x: %w", n, r.off, errTruncated))
		return nil
	}
	b := r.data[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

// name reads a name: its length, then its UTF-8 bytes.
func (r *reader) name() string { return string(r.bytes(r.uleb())) }

// limits reads a limits structure: flags, minimum, and a maximum if the
// flags say so.
func (r *reader) limits() {
	flags := r.byte()
	r.uleb()
	if flags&1 != 0 {
		r.uleb()
	}
}

// constExpr reads a constant expression ending with the end opcode and
// returns its value if it is a single i32.const or i64.const.
func (r *reader) constExpr() (int64, bool) {
	var v int64
	ok := false
	switch op := r.byte(); op {
	case 0x41, 0x42: // i32.const, i64.const
		v, ok = r.sleb(), true
	case 0x23: // global.get
		r.uleb()
	default:
		r.fail(fmt.Errorf("unsupported constant expression opcode %#x at %#x", op, r.off-1))
		return 0, false
	}
	if end := r.byte(); end != 0x0b {
		r.fail(fmt.Errorf("constant expression not ended at %#x", r.off-1))
		return 0, false
	}
	return v, ok && r.err == nil
}
