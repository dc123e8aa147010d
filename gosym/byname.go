package gosym

import (
	"cmp"
	"hash/maphash"
	"iter"
	"slices"
	"sync"
)

// nameIndex finds functions by name: the functab indices of every
// function sorted by a hash of its name with type arguments left out
// (its key), then by address. It is built by the first lookup by name (a
// pass over every function and a sort of integers) and shared by all
// later ones. Hashing makes building it linear in the bytes of the names,
// and a lookup linear in the names it compares: a sort by the names
// themselves compares long names again and again, which a damaged name
// table makes as long as maxString.
type nameIndex struct {
	once   sync.Once
	seed   maphash.Seed
	idx    []uint32 // functab indices
	hashes []uint64 // hashes[k]: the hash of the key of idx[k]
	err    error
}

// build fills the index, once.
func (t *Table) nameIndex() (*nameIndex, error) {
	b := &t.byName
	b.once.Do(func() {
		b.seed = maphash.MakeSeed()
		type entry struct {
			hash uint64
			i    uint32
		}
		var es []entry
		for f, err := range t.Functions() {
			if err != nil {
				b.err = err
				return
			}
			es = append(es, entry{keyHash(b.seed, f.Name()), f.idx})
		}
		// Functions yields in address order; a stable sort keeps it
		// within a hash.
		slices.SortStableFunc(es, func(a, b entry) int { return cmp.Compare(a.hash, b.hash) })
		b.idx = make([]uint32, len(es))
		b.hashes = make([]uint64, len(es))
		for k, e := range es {
			b.idx[k], b.hashes[k] = e.i, e.hash
		}
	})
	return b, b.err
}

// candidates returns the range of the index whose keys hash as name's
// does.
func (b *nameIndex) candidates(name string) (lo, hi int) {
	h := keyHash(b.seed, name)
	lo, _ = slices.BinarySearch(b.hashes, h)
	hi = lo
	for hi < len(b.hashes) && b.hashes[hi] == h {
		hi++
	}
	return lo, hi
}

// keyParts yields the parts of a name that WithoutTypeArgs joins, without
// joining them.
type keyParts struct {
	rest string
	done bool
}

func (p *keyParts) next() (part string, ok bool) {
	if p.done {
		return "", false
	}
	if i := typeArgsIndex(p.rest); i >= 0 {
		if end := matchBracket(p.rest, i); end >= 0 {
			part, p.rest = p.rest[:i], p.rest[end+1:]
			return part, true
		}
	}
	p.done = true
	return p.rest, true
}

// keyHash returns the hash of WithoutTypeArgs(name), without allocating.
func keyHash(seed maphash.Seed, name string) uint64 {
	if typeArgsIndex(name) < 0 {
		return maphash.String(seed, name)
	}
	var h maphash.Hash
	h.SetSeed(seed)
	p := keyParts{rest: name}
	for part, ok := p.next(); ok; part, ok = p.next() {
		h.WriteString(part)
	}
	return h.Sum64()
}

// sameKey reports whether WithoutTypeArgs(a) == WithoutTypeArgs(b),
// without allocating.
func sameKey(a, b string) bool {
	pa, pb := keyParts{rest: a}, keyParts{rest: b}
	var sa, sb string
	for {
		for ok := true; sa == "" && ok; {
			sa, ok = pa.next()
		}
		for ok := true; sb == "" && ok; {
			sb, ok = pb.next()
		}
		if sa == "" || sb == "" {
			return sa == sb
		}
		n := min(len(sa), len(sb))
		if sa[:n] != sb[:n] {
			return false
		}
		sa, sb = sa[n:], sb[n:]
	}
}

// LookupFunction returns the function with the given symbol name, as
// Function.Name reports it; if several have it, the one at the lowest
// address (LookupFunctions yields all of them). The first lookup by name
// sorts the names of all functions once; later ones are binary searches.
func (t *Table) LookupFunction(name string) (Function, error) {
	if t.closed.Load() {
		return Function{}, ErrClosed
	}
	b, err := t.nameIndex()
	if err != nil {
		return Function{}, err
	}
	lo, hi := b.candidates(name)
	for _, i := range b.idx[lo:hi] {
		if f, _, err := t.funcAt(uint64(i)); err != nil || f.Name() == name {
			return f, err
		}
	}
	return Function{}, &nameError{name}
}

// LookupFunctions yields every function with the given name, by address.
// Type arguments may be left out: "main.(*Stack).Pop" also finds
// "main.(*Stack[go.shape.int]).Pop" and "main.(*Stack[go.shape.string]).Pop";
// a name that gives them matches only functions with exactly those. It
// yields nothing for a name no physical function has (a function that was
// inlined everywhere has none: Function.InlinedCalls finds its copies).
// Real binaries hold many functions of one name: the instantiations of a
// generic function, and functions of vendored copies of a package.
func (t *Table) LookupFunctions(name string) iter.Seq2[Function, error] {
	return func(yield func(Function, error) bool) {
		if t.closed.Load() {
			yield(Function{}, ErrClosed)
			return
		}
		b, err := t.nameIndex()
		if err != nil {
			yield(Function{}, err)
			return
		}
		p := keyParts{rest: name}
		_, _ = p.next()
		exact := !p.done // name has type arguments: only it matches
		lo, hi := b.candidates(name)
		for _, i := range b.idx[lo:hi] {
			f, _, err := t.funcAt(uint64(i))
			if err != nil {
				yield(Function{}, err)
				return
			}
			if exact && f.Name() != name || !exact && !sameKey(f.Name(), name) {
				continue
			}
			if !yield(f, nil) {
				return
			}
		}
	}
}
