package gosym

import (
	"iter"
	"slices"
	"strings"
	"sync"
)

// nameIndex finds functions by name: the functab indices of every
// function sorted by name with type arguments left out, then by address.
// It is built by the first lookup by name (a pass over every function and
// a sort) and shared by all later ones.
type nameIndex struct {
	once sync.Once
	idx  []uint32 // functab indices
	keys []string // keys[k]: the name of idx[k] without type arguments
	err  error
}

// build fills the index, once.
func (t *Table) nameIndex() (*nameIndex, error) {
	b := &t.byName
	b.once.Do(func() {
		type entry struct {
			key string
			i   uint32
		}
		var es []entry
		for f, err := range t.Functions() {
			if err != nil {
				b.err = err
				return
			}
			es = append(es, entry{WithoutTypeArgs(f.Name()), f.idx})
		}
		// Functions yields in address order; a stable sort keeps it
		// within a key.
		slices.SortStableFunc(es, func(a, b entry) int { return strings.Compare(a.key, b.key) })
		b.idx = make([]uint32, len(es))
		b.keys = make([]string, len(es))
		for k, e := range es {
			b.idx[k], b.keys[k] = e.i, e.key
		}
	})
	return b, b.err
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
	key := WithoutTypeArgs(name)
	for k, _ := slices.BinarySearch(b.keys, key); k < len(b.keys) && b.keys[k] == key; k++ {
		if f, _, err := t.funcAt(uint64(b.idx[k])); err != nil || f.Name() == name {
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
		key := WithoutTypeArgs(name)
		exact := key != name
		for k, _ := slices.BinarySearch(b.keys, key); k < len(b.keys) && b.keys[k] == key; k++ {
			f, _, err := t.funcAt(uint64(b.idx[k]))
			if err != nil {
				yield(Function{}, err)
				return
			}
			if exact && f.Name() != name {
				continue
			}
			if !yield(f, nil) {
				return
			}
		}
	}
}
