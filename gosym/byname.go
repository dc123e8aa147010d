package gosym

import (
	"hash/maphash"
	"iter"
	"math"
	"slices"
	"strings"
	"sync"
)

// nameIndex finds functions by name: a hash table of every function by
// its name with type arguments left out. It is built by the first lookup
// by name, in one pass over the names (no sort: debug/gosym's NewTable
// reads every name too) and shared by all later ones.
type nameIndex struct {
	once sync.Once
	seed maphash.Seed
	// The functions whose key hashes to bucket b (the hash's low bits)
	// are entries[start[b]:start[b+1]], in functab order.
	start   []uint32
	entries []nameEntry
	keys    []string // the keys of the functions with type arguments
	mask    uint64
	err     error
	// unnamed is the first function whose name cannot be read (no NUL
	// within maxString bytes, or outside the name table), -1 if none: a
	// lookup that finds nothing reports its damage, since the name sought
	// may be that one.
	unnamed int64
}

// errNameWork is the message of the error of a name index whose names
// are longer, together, than the table's size allows.
const errNameWork = "function names overlap beyond the name table's size (many functions share one long name)"

// nameEntry is one function of the name index.
type nameEntry struct {
	fn  uint32 // functab index
	key int32  // index in keys; -1: the key is the function's name
}

// nameIndex returns the index, building it on first use.
func (t *Table) nameIndex() (*nameIndex, error) {
	x := &t.byName
	x.once.Do(func() { t.buildNameIndex(x) })
	return x, x.err
}

// buildNameIndex reads every function's name from its record as is:
// checking the record is left to the lookups that find it (funcAt).
func (t *Table) buildNameIndex(x *nameIndex) {
	x.seed = maphash.MakeSeed()
	n := t.hdr.nfunc
	nb := uint64(1)
	for nb < n {
		nb *= 2
	}
	x.mask = nb - 1
	hashes := make([]uint64, n) // the bucket of each function; ^0: none
	x.start = make([]uint32, nb+1)
	var keyOf []int32 // by function, for those with type arguments
	// The bytes of the names read: a sound table's names are its own, or
	// shared by a few functions of one name.
	budget := 4*int64(len(t.names.src)) + 1<<20
	x.unnamed = -1
	for i := range n {
		hashes[i] = math.MaxUint64
		name, ok, named := t.rawFuncName(i)
		if !ok {
			continue
		}
		if !named {
			if x.unnamed < 0 {
				x.unnamed = int64(i)
			}
			continue
		}
		if budget -= int64(len(name)); budget < 0 {
			x.err = &FormatError{Off: -1, Msg: errNameWork}
			return
		}
		key := WithoutTypeArgs(name)
		if len(key) != len(name) {
			if keyOf == nil {
				keyOf = make([]int32, n)
				for j := range keyOf {
					keyOf[j] = -1
				}
			}
			keyOf[i] = int32(len(x.keys))
			x.keys = append(x.keys, key)
		}
		hashes[i] = maphash.String(x.seed, key) & x.mask
		x.start[hashes[i]+1]++
	}
	for b := 1; b < len(x.start); b++ {
		x.start[b] += x.start[b-1]
	}
	x.entries = make([]nameEntry, x.start[nb])
	next := slices.Clone(x.start[:nb])
	for i, h := range hashes {
		if h == math.MaxUint64 {
			continue
		}
		e := nameEntry{fn: uint32(i), key: -1}
		if keyOf != nil {
			e.key = keyOf[i]
		}
		x.entries[next[h]] = e
		next[h]++
	}
}

// rawFuncName returns the name of function i (i < nfunc) from its record
// as is; ok is false for a functab hole or a record out of range, named
// false for a name that cannot be read.
func (t *Table) rawFuncName(i uint64) (name string, ok, named bool) {
	off, ok := t.funcOffAt(i)
	funcs, l := t.hdr.funcs, &t.layout
	if !ok || off > uint64(len(funcs)) || uint64(len(funcs))-off < uint64(l.fixedSize) {
		return "", false, false
	}
	name, named = t.names.lookup(uint64(t.hdr.rd.u32(funcs[off+uint64(l.nameOff):])))
	return name, true, named
}

// notFound returns the error of a lookup by name that found nothing: the
// damage of the first function whose name cannot be read, if any, else a
// *nameError.
func (x *nameIndex) notFound(t *Table, name string) error {
	if x.unnamed >= 0 {
		if _, _, err := t.funcAt(uint64(x.unnamed)); err != nil {
			return err
		}
	}
	into, err := t.inlinedInto(name)
	if err != nil {
		return err
	}
	return &nameError{name, into}
}

// inlinedIndex maps the name of every function inlined somewhere to the
// functab index of the first function it was inlined into. The first
// LookupFunction that finds no physical function builds it, walking every
// inline tree once; its size is bounded by the table's.
type inlinedIndex struct {
	once sync.Once
	into map[string]uint32
	err  error
}

// inlinedInto returns the name of a function that name's code was inlined
// into, "" if none.
func (t *Table) inlinedInto(name string) (string, error) {
	x := &t.byInlined
	x.once.Do(func() {
		x.into = map[string]uint32{}
		var calls []InlinedCall
		for f, err := range t.Functions() {
			if err == nil {
				calls, err = f.InlinedCalls(calls)
			}
			if err != nil {
				x.err = err
				return
			}
			for _, c := range calls {
				if _, ok := x.into[c.Name]; !ok {
					x.into[c.Name] = f.idx
				}
			}
		}
	})
	if x.err != nil {
		return "", x.err
	}
	for n := name; n != ""; n = pointerMethod(n) {
		if i, ok := x.into[n]; ok {
			f, _, err := t.funcAt(uint64(i))
			if err != nil {
				return "", err
			}
			return f.Name(), nil
		}
	}
	return "", nil
}

// find calls fn for each function whose name without type arguments is
// key, in address order, until it returns false. The record of each is
// checked (funcAt) only once its name matched, so that the functions a
// lookup fails on do not depend on the hash.
func (x *nameIndex) find(t *Table, key string, fn func(Function) bool) error {
	b := maphash.String(x.seed, key) & x.mask
	for _, e := range x.entries[x.start[b]:x.start[b+1]] {
		var k string
		if e.key >= 0 {
			k = x.keys[e.key]
		} else {
			k, _, _ = t.rawFuncName(uint64(e.fn))
		}
		if k != key {
			continue
		}
		f, ok, err := t.funcAt(uint64(e.fn))
		if err != nil {
			return err
		}
		if ok && !fn(f) {
			return nil
		}
	}
	return nil
}

// LookupFunction returns the function with the given symbol name, as
// Function.Name reports it; if several have it, the one at the lowest
// address (LookupFunctions yields all of them). The first lookup by name
// reads the names of all functions once, into a hash table; later ones
// read the functions of one bucket. A table whose names overlap far
// beyond its name table (a name table without NULs) makes it fail with a
// *FormatError.
func (t *Table) LookupFunction(name string) (Function, error) {
	f, ok, err := t.findFunction(name)
	if err != nil || ok {
		return f, err
	}
	return Function{}, t.byName.notFound(t, name)
}

// findFunction is LookupFunction without the error for a name not found
// (which may walk every inline tree, see inlinedInto): the table's own
// lookups of runtime functions use it.
func (t *Table) findFunction(name string) (Function, bool, error) {
	if t.closed.Load() {
		return Function{}, false, ErrClosed
	}
	b, err := t.nameIndex()
	if err != nil {
		return Function{}, false, err
	}
	var found Function
	for n := name; n != ""; n = pointerMethod(n) {
		if err := b.find(t, WithoutTypeArgs(n), func(f Function) bool {
			if f.Name() == n {
				found = f
				return false
			}
			return true
		}); err != nil {
			return Function{}, false, err
		}
		if found.t != nil {
			return found, true, nil
		}
	}
	return Function{}, false, nil
}

// pointerMethod returns, for a name spelled as vulnerability databases
// spell a method ("sync/atomic.Pointer.Load": the receiver without
// parentheses and '*'), the name of the same method with a pointer
// receiver as the binary stores it ("sync/atomic.(*Pointer).Load"); "" for
// a name of another form.
func pointerMethod(name string) string {
	end := packageEnd(name)
	if end < 0 {
		return ""
	}
	rest := name[end+1:]
	if strings.HasPrefix(rest, "(") {
		return ""
	}
	recv, method := cutPart(rest)
	if recv == "" || method == "" || recv == "map" || isClosurePart(method) {
		return ""
	}
	return name[:end+1] + "(*" + recv + ")." + method
}

// LookupFunctions yields every function with the given name, by address.
// A method may also be named as vulnerability databases name it, without
// the receiver's parentheses and '*' ("sync/atomic.Pointer.Load" finds
// "sync/atomic.(*Pointer[go.shape.int]).Load"), as may LookupFunction's.
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
		more, n := true, 0
		find := func(name string) error {
			key := WithoutTypeArgs(name)
			exact := key != name
			return b.find(t, key, func(f Function) bool {
				if exact && f.Name() != name {
					return true
				}
				n++
				more = yield(f, nil)
				return more
			})
		}
		err = find(name)
		if err == nil && n == 0 {
			if pm := pointerMethod(name); pm != "" {
				err = find(pm) // the vulnerability databases' spelling of a pointer method
			}
		}
		if err == nil && n == 0 && b.unnamed >= 0 {
			// The name sought may be one that cannot be read.
			_, _, err = t.funcAt(uint64(b.unnamed))
		}
		if err != nil && more {
			yield(Function{}, err)
		}
	}
}
