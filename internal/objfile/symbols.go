package objfile

import (
	"iter"
	"sync"
)

// SymbolMap is a backend's symbol table, read on the first lookup. Where
// several symbols share a name, the first one added wins. It is safe for
// concurrent use.
type SymbolMap struct {
	once sync.Once
	syms map[string]Symbol
	err  error
}

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
// symbols it added before failing stay usable, and every lookup returns
// its error.
func (m *SymbolMap) Lookup(name string, load func() error) (Symbol, bool, error) {
	m.once.Do(func() { m.err = load() })
	s, ok := m.syms[name]
	return s, ok, m.err
}

// Each walks a symbol table: it calls fn with each symbol, in table
// order, until fn returns false, and returns the error that ended the
// walk early (a damaged table), else nil.
type Each func(fn func(Symbol) bool) error

// Seq yields the symbols of each, then the error that ended the walk, if
// any: the Symbols method of a SymbolIterator.
func (each Each) Seq() iter.Seq2[Symbol, error] {
	return func(yield func(Symbol, error) bool) {
		stopped := false
		err := each(func(s Symbol) bool {
			stopped = !yield(s, nil)
			return !stopped
		})
		if err != nil && !stopped {
			yield(Symbol{}, err)
		}
	}
}

// LookupEach is Lookup with every symbol of each as the file's symbols.
func (m *SymbolMap) LookupEach(name string, each Each) (Symbol, bool, error) {
	return m.Lookup(name, func() error {
		return each(func(s Symbol) bool {
			m.Add(s)
			return true
		})
	})
}
