package profiles

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/pprof/profile"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/object"
)

// binary is one of the tables given to Symbolize, with what matching and
// address translation need.
type binary struct {
	tab       *gosym.Table
	gnu, goID string          // build IDs; "" when absent
	mapping   *object.Mapping // file offsets to link-time addresses

	symsOnce sync.Once
	syms     []object.FuncSymbol // the object's function symbols, read on first use
}

// symbolAt returns the name of the function symbol of b's object that
// holds pc (the innermost one, where symbols nest), or "".
func (b *binary) symbolAt(pc uint64) string {
	b.symsOnce.Do(func() { b.syms = object.FuncSymbols(b.tab.Object()) })
	k, _ := slices.BinarySearchFunc(b.syms, pc+1, func(s object.FuncSymbol, t uint64) int { return cmp.Compare(s.Lo, t) })
	// b.syms[:k] start at or below pc; the nearest that holds pc wins.
	for i := k - 1; i >= 0 && i >= k-8; i-- {
		if s := b.syms[i]; pc < s.Hi {
			return s.Name
		}
	}
	return ""
}

func newBinary(tab *gosym.Table) (*binary, error) {
	obj := tab.Object()
	gnu, goID, err := object.BuildIDs(obj)
	if err != nil {
		return nil, fmt.Errorf("profiles: reading build IDs: %w", err)
	}
	m, err := object.NewMapping(obj)
	if err != nil {
		return nil, fmt.Errorf("profiles: %w", err)
	}
	return &binary{tab: tab, gnu: gnu, goID: goID, mapping: m}, nil
}

// matches reports whether b has the build ID id (hex digits of a GNU build
// ID compare without regard to case).
func (b *binary) matches(id string) bool {
	return id != "" && (strings.EqualFold(id, b.gnu) || id == b.goID)
}

// matchMappings returns the binary of each mapping, nil for the mappings
// no binary matches; main, if not nil, is the main mapping's binary (see
// WithMain). See the package documentation, "Mappings".
func matchMappings(p *profile.Profile, bins []*binary, main *binary) map[*profile.Mapping]*binary {
	m := make(map[*profile.Mapping]*binary, len(p.Mapping))
	for _, mp := range p.Mapping {
		if mp.BuildID == "" {
			continue
		}
		for _, b := range bins {
			if b.matches(mp.BuildID) {
				m[mp] = b
				break
			}
		}
	}
	if len(p.Mapping) == 0 {
		return m
	}
	first := p.Mapping[0]
	if main == nil && len(bins) == 1 && len(m) == 0 && first.BuildID == "" {
		// One binary, which no build ID matched, and a main mapping
		// without one: that binary's (the shared libraries of the
		// process may have build IDs, such as the dynamic loader's).
		main = bins[0]
	}
	if main != nil {
		for _, mp := range p.Mapping {
			if mp == first || (first.File != "" && mp.File == first.File) {
				m[mp] = main
			}
		}
	}
	return m
}

// linkAddr returns the link-time address of run-time address addr in
// mapping mp of b: the address of the byte at file offset addr − Start +
// Offset (object.Mapping). A mapping without addresses (Start and Limit
// 0) holds link-time addresses.
func (b *binary) linkAddr(mp *profile.Mapping, addr uint64) (uint64, bool) {
	if mp == nil || mp.Start == 0 && mp.Limit == 0 {
		return addr, true
	}
	if addr < mp.Start {
		return 0, false
	}
	a, err := b.mapping.Addr(addr - mp.Start + mp.Offset)
	return a, err == nil
}
