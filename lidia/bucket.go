package lidia

import "math"

// A bucketIndex narrows a binary search over sorted keys to a few of
// them: the keys in [base+k<<shift, base+(k+1)<<shift) are those from b[k]
// to b[k+1]-1. Without buckets (few keys, or keys out of order) the search
// covers all keys.
type bucketIndex struct {
	n     int // number of keys
	base  uint64
	shift uint
	b     []uint32
}

// newBucketIndex indexes the n keys key(0), ..., key(n-1) with about one
// bucket for every per keys, 4 bytes each.
func newBucketIndex(n, per int, key func(int) uint64) bucketIndex {
	if n < 64 || uint64(n) >= math.MaxUint32 {
		return bucketIndex{n: n}
	}
	lo, hi := key(0), key(n-1)
	prev := lo
	for i := range n {
		k := key(i)
		if k < prev {
			return bucketIndex{n: n} // not sorted: plain binary search
		}
		prev = k
	}
	span := hi - lo + 1
	if span == 0 {
		span = math.MaxUint64 // lo = 0, hi = MaxUint64
	}
	var shift uint
	for span>>shift > uint64(n/per) {
		shift++
	}
	nb := int(span>>shift) + 1
	b := make([]uint32, nb+1)
	i := 0
	for k := range nb + 1 {
		// The first key at or above the bucket's start.
		start := lo + uint64(k)<<shift
		if k == nb || start < lo {
			i = n
		}
		for i < n && key(i) < start {
			i++
		}
		b[k] = uint32(i)
	}
	return bucketIndex{n, lo, shift, b}
}

// bounds returns the keys that a search for the last key at most v must
// look at: that key's index plus one is in [lo, hi].
func (x *bucketIndex) bounds(v uint64) (lo, hi int) {
	n := x.n
	if x.b == nil {
		return 0, n
	}
	if v < x.base {
		return 0, 0
	}
	k := (v - x.base) >> x.shift
	if k+1 >= uint64(len(x.b)) {
		return n, n // past the last key
	}
	return int(x.b[k]), int(x.b[k+1])
}
