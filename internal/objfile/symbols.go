package objfile

import (
	"fmt"
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

// Lookup returns the symbol called name. The first call runs load, which
// adds the file's symbols; if load fails, the symbols it added before
// failing stay usable and lookups of other names report its error. Errors
// wrap ErrNoSymbol.
func (m *SymbolMap) Lookup(name string, load func() error) (Symbol, error) {
	m.once.Do(func() {
		if err := load(); err != nil {
			m.err = fmt.Errorf("%w: %v", ErrNoSymbol, err)
		}
	})
	if s, ok := m.syms[name]; ok {
		return s, nil
	}
	if m.err != nil {
		return Symbol{}, m.err
	}
	return Symbol{}, ErrNoSymbol
}
