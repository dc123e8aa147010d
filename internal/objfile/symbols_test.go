package objfile

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// table is a symbol table for SymbolMap: its Each counts the walks, for
// one name and for all.
type table struct {
	syms       []Symbol
	err        error // ends the walk after the symbols, if not nil
	mu         sync.Mutex
	named, all int
}

func (tb *table) each(name string, fn func(Symbol) bool) error {
	tb.mu.Lock()
	if name == "" {
		tb.all++
	} else {
		tb.named++
	}
	tb.mu.Unlock()
	for _, s := range tb.syms {
		if (name == "" || s.Name == name) && !fn(s) {
			return nil
		}
	}
	return tb.err
}

// TestLookupEach checks that the first directLookups lookups walk the
// table for their name, and that later ones build the map once, with the
// same answers: the first symbol of a name, and the table's error only
// when none is found.
func TestLookupEach(t *testing.T) {
	damage := errors.New("damaged")
	tb := &table{err: damage}
	for i := range 10 {
		tb.syms = append(tb.syms, Symbol{Name: fmt.Sprint("s", i%5), Addr: uint64(i)})
	}
	var m SymbolMap
	for i := range 3 * directLookups {
		name := fmt.Sprint("s", i%7) // s5 and s6 are missing
		s, ok, err := m.LookupEach(name, tb.each)
		switch {
		case i%7 < 5 && (!ok || s.Addr != uint64(i%7) || err != nil):
			t.Errorf("lookup %d of %s = %v, %v, %v; want the symbol at %d", i, name, s, ok, err, i%7)
		case i%7 >= 5 && (ok || !errors.Is(err, damage)):
			t.Errorf("lookup %d of missing %s = %v, %v, %v; want the table's error", i, name, s, ok, err)
		}
	}
	if tb.named != directLookups || tb.all != 1 {
		t.Errorf("%d walks for a name, %d of all; want %d, 1", tb.named, tb.all, directLookups)
	}
	if _, ok, err := m.LookupEach("", tb.each); ok || err != nil {
		t.Errorf("lookup of \"\" = %v, %v; want nothing", ok, err)
	}
	// Concurrent lookups, before and after the map is built (for -race).
	var m2 SymbolMap
	var wg sync.WaitGroup
	results := make([]string, 4*directLookups)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, ok, _ := m2.LookupEach("s3", tb.each)
			results[i] = fmt.Sprint(s, ok)
		}()
	}
	wg.Wait()
	if want := fmt.Sprint(Symbol{Name: "s3", Addr: 3}, true); slices.IndexFunc(results, func(r string) bool { return r != want }) >= 0 {
		t.Errorf("concurrent lookups: %v; want %s", results, want)
	}
}
