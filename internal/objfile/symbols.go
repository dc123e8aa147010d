package objfile

import (
	"iter"
	"sync"
	"sync/atomic"
)

// directLookups is how many lookups a SymbolMap answers by walking the
// symbol table before it builds its map. Opening a Go table looks up a few
// symbols at most (runtime.firstmoduledata, runtime.pclntab, ...): a walk
// that compares names where they are stored allocates nothing and costs
// far less than a map of every symbol, which only many lookups repay.
const directLookups = 8

// SymbolMap is a backend's symbol table indexed by name. Where several
// symbols share a name, the first one added wins. It is safe for
// concurrent use.
type SymbolMap struct {
	lookups atomic.Int32 // lookups so far, up to directLookups+1
	once    sync.Once
	mapped  atomic.Bool // the map is made
	syms    map[string]Symbol
	err     error
}

// Mapped reports whether the map of the symbols has been made.
func (m *SymbolMap) Mapped() bool { return m.mapped.Load() }

// Add records s unless a symbol of the same name was added before. It is
// for the load function given to Lookup.
func (m *SymbolMap) Add(s Symbol) {
	if m.syms == nil {
		m.syms = make(map[string]Symbol)
	}
	if _, ok := m.syms[s.Name]; !ok {
		m.syms[s.Name] = s
	}
}

// Lookup returns the symbol called name, as Decoder.LookupSymbol does. The
// first call runs load, which adds the file's symbols; if load fails, the
// symbols it added before failing stay usable, and every lookup that
// finds nothing returns its error.
func (m *SymbolMap) Lookup(name string, load func() error) (Symbol, bool, error) {
	m.once.Do(func() {
		m.err = load()
		m.mapped.Store(true)
	})
	if s, ok := m.syms[name]; ok {
		return s, true, nil
	}
	return Symbol{}, false, m.err
}

// Each walks a symbol table: it calls fn with each symbol, in table
// order, until fn returns false, and returns the error that ended the
// walk early (a damaged table), else nil. If name is not empty, fn is
// called only with the symbols called name, which are compared where they
// are stored: such a walk allocates nothing.
type Each func(name string, fn func(Symbol) bool) error

// Seq yields the symbols of each, then the error that ended the walk, if
// any: the Symbols method of a SymbolIterator.
func (each Each) Seq() iter.Seq2[Symbol, error] {
	return func(yield func(Symbol, error) bool) {
		stopped := false
		err := each("", func(s Symbol) bool {
			stopped = !yield(s, nil)
			return !stopped
		})
		if err != nil && !stopped {
			yield(Symbol{}, err)
		}
	}
}

// LookupEach is Lookup with every symbol of each as the file's symbols.
// The first directLookups calls walk each for name alone, allocating
// nothing; later ones build the map, once, and read it. Both find the
// same symbol, the first of the name in table order.
func (m *SymbolMap) LookupEach(name string, each Each) (Symbol, bool, error) {
	if name == "" {
		return Symbol{}, false, nil // no symbol is nameless
	}
	if m.lookups.Load() <= directLookups && m.lookups.Add(1) <= directLookups {
		var found Symbol
		ok := false
		err := each(name, func(s Symbol) bool {
			found, ok = s, true
			return false
		})
		if ok {
			return found, true, nil
		}
		return Symbol{}, false, err
	}
	return m.Lookup(name, func() error {
		return each("", func(s Symbol) bool {
			m.Add(s)
			return true
		})
	})
}
