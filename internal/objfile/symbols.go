package objfile

import "sync"

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
