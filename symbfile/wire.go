package symbfile

import (
	"encoding/binary"
	"math"
	"strings"
	"unicode/utf8"
)

// The protobuf wire format, the part of it that symbfile messages use
// (FORMAT.md, "Encoding"): varints, zigzag varints, length-delimited
// fields and packed repeated varints. Writing is appending to a byte
// slice; reading walks the fields of a message one at a time.

// Wire types.
const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
	wireI32    = 5
)

func appendVarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendTag(b []byte, field, wire int) []byte {
	return appendVarint(b, uint64(field)<<3|uint64(wire))
}

// appendUint appends a varint field; proto3 leaves out a zero unless the
// field is a member of a oneof (always set).
func appendUint(b []byte, field int, v uint64, always bool) []byte {
	if v == 0 && !always {
		return b
	}
	return appendVarint(appendTag(b, field, wireVarint), v)
}

// appendSint appends a sint64 field (zigzag encoding), always.
func appendSint(b []byte, field int, v int64) []byte {
	return appendVarint(appendTag(b, field, wireVarint), uint64(v<<1)^uint64(v>>63))
}

// appendString appends a string field, always (the strings written are
// members of oneofs, or elements of a repeated field).
func appendString(b []byte, field int, s string) []byte {
	b = appendVarint(appendTag(b, field, wireLen), uint64(len(s)))
	return append(b, s...)
}

// appendPacked appends a packed repeated uint32 field, nothing if vs is
// empty.
func appendPacked(b []byte, field int, vs []uint32) []byte {
	if len(vs) == 0 {
		return b
	}
	n := 0
	for _, v := range vs {
		n += varintLen(uint64(v))
	}
	b = appendVarint(appendTag(b, field, wireLen), uint64(n))
	for _, v := range vs {
		b = appendVarint(b, uint64(v))
	}
	return b
}

func varintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// validString returns s, with every byte sequence that is not UTF-8
// replaced by U+FFFD: proto3 strings must be UTF-8 (protoc and prost
// reject others), and a damaged binary can hold any bytes in a name.
func validString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// readVarint decodes a varint at the start of p: its value and length, or
// length 0 if p ends inside it or it runs past 10 bytes or 64 bits.
func readVarint(p []byte) (uint64, int) {
	v, n := binary.Uvarint(p)
	if n <= 0 {
		return 0, 0
	}
	return v, n
}

// A field is one field of a message, as read: its number, wire type, and
// value (varints and fixed-size values in v, length-delimited ones in b).
type field struct {
	num  uint64
	wire int
	v    uint64
	b    []byte
}

// nextField reads the field at the start of p and returns it and the
// rest of p; ok is false if p does not start with a whole field of a wire
// type this package reads (groups, deprecated since proto2, are not
// read).
func nextField(p []byte) (f field, rest []byte, ok bool) {
	tag, n := readVarint(p)
	if n == 0 {
		return f, nil, false
	}
	p = p[n:]
	f.num, f.wire = tag>>3, int(tag&7)
	if f.num == 0 || f.num > math.MaxInt32>>2 {
		return f, nil, false
	}
	switch f.wire {
	case wireVarint:
		f.v, n = readVarint(p)
		if n == 0 {
			return f, nil, false
		}
		return f, p[n:], true
	case wireI64:
		if len(p) < 8 {
			return f, nil, false
		}
		f.v = binary.LittleEndian.Uint64(p)
		return f, p[8:], true
	case wireI32:
		if len(p) < 4 {
			return f, nil, false
		}
		f.v = uint64(binary.LittleEndian.Uint32(p))
		return f, p[4:], true
	case wireLen:
		l, n := readVarint(p)
		if n == 0 || l > uint64(len(p)-n) {
			return f, nil, false
		}
		f.b = p[n : n+int(l) : n+int(l)]
		return f, p[n+int(l):], true
	}
	return f, nil, false
}

// unzigzag decodes a sint64.
func unzigzag(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }

// eachUint32 calls fn with each element of a repeated uint32 field, packed
// (wireLen) or not (wireVarint); values over 32 bits are truncated, as
// protobuf's decoders do. It returns false for a damaged packed field or
// another wire type.
func eachUint32(f field, fn func(uint32)) bool {
	switch f.wire {
	case wireVarint:
		fn(uint32(f.v))
		return true
	case wireLen:
		p := f.b
		for len(p) > 0 {
			v, n := readVarint(p)
			if n == 0 {
				return false
			}
			fn(uint32(v))
			p = p[n:]
		}
		return true
	}
	return false
}
