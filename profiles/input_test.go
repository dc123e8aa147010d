package profiles_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/object"
	"github.com/gosym-dev/gosym/profiles"
)

// TestNilEntries checks that Symbolize returns an error, and does not
// panic, for a nil profile or table and for nil entries in a profile (the
// reproducer r09 of issue 21: profile.Parse makes none, programs that build
// or edit profiles can), and that the profile is left as it was.
func TestNilEntries(t *testing.T) {
	orig, tab := selfProfile(t)
	base := stripProfile(orig)
	for _, c := range []struct {
		name string
		edit func(p *profile.Profile) []*gosym.Table
	}{
		{"Location", func(p *profile.Profile) []*gosym.Table { p.Location = append(p.Location, nil); return nil }},
		{"Mapping", func(p *profile.Profile) []*gosym.Table { p.Mapping = append(p.Mapping, nil); return nil }},
		{"Sample", func(p *profile.Profile) []*gosym.Table { p.Sample = append(p.Sample, nil); return nil }},
		{"Function", func(p *profile.Profile) []*gosym.Table { p.Function = append(p.Function, nil); return nil }},
		{"Sample.Location", func(p *profile.Profile) []*gosym.Table {
			p.Sample[0].Location = append(p.Sample[0].Location, nil)
			return nil
		}},
		{"table", func(p *profile.Profile) []*gosym.Table { return []*gosym.Table{nil} }},
		{"second table", func(p *profile.Profile) []*gosym.Table { return []*gosym.Table{tab, nil} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := base.Copy()
			tabs := c.edit(p)
			if tabs == nil {
				tabs = []*gosym.Table{tab}
			}
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("Symbolize panics: %v", r)
					}
				}()
				_, err = profiles.Symbolize(p, tabs)
			}()
			if err == nil || !strings.HasPrefix(err.Error(), "profiles: ") || !strings.Contains(err.Error(), "nil") {
				t.Errorf("Symbolize: %v, want an error about a nil entry", err)
			}
			for _, l := range p.Location {
				if l != nil && len(l.Line) > 0 {
					t.Fatalf("location %d was symbolized", l.ID)
				}
			}
		})
	}
	if _, err := profiles.Symbolize(nil, []*gosym.Table{tab}); err == nil {
		t.Errorf("Symbolize(nil): no error")
	}

	// A sample that refers to a location not in p.Location is left as
	// it is, and the others are symbolized.
	p := base.Copy()
	stray := &profile.Location{ID: 1 << 40, Address: p.Location[0].Address}
	for _, s := range p.Sample {
		s.Location = append([]*profile.Location{stray}, s.Location...)
	}
	if st, err := profiles.Symbolize(p, []*gosym.Table{tab}); err != nil || st.Symbolized == 0 {
		t.Errorf("a stray location: %+v, %v", st, err)
	}
	if len(stray.Line) != 0 {
		t.Errorf("the stray location was symbolized: %v", stray.Line)
	}
}

// TestNoMatch checks that Symbolize fails with ErrNoMatch when no location
// is in a mapping of the binaries given (issue 22: it returned nil with
// every location unmatched), naming the build IDs of both sides, and
// leaves the profile as it was; and that WithMain names the main
// mapping's binary whatever its build ID.
func TestNoMatch(t *testing.T) {
	orig, tab := selfProfile(t)
	gnu, goID, err := object.BuildIDs(tab.Object())
	if err != nil {
		t.Fatal(err)
	}
	const other = "0123456789abcdef0123456789abcdef01234567" // another build's GNU build ID
	want := linesOf(profileOf(t, stripProfile(orig), tab))

	p := stripProfile(orig)
	for _, mp := range p.Mapping {
		if mp.BuildID == gnu || mp.BuildID == goID || mp.BuildID == "" {
			mp.BuildID = other
		}
	}
	before := p.String()
	st, err := profiles.Symbolize(p, []*gosym.Table{tab})
	if !errors.Is(err, profiles.ErrNoMatch) {
		t.Fatalf("Symbolize with another build ID: %+v, %v; want ErrNoMatch", st, err)
	}
	for _, id := range []string{other, gnu, goID} {
		if id != "" && !strings.Contains(err.Error(), fmt.Sprintf("%q", id)) {
			t.Errorf("the error does not name the build ID %q: %v", id, err)
		}
	}
	if st.Locations != len(p.Location) || st.Unmatched != st.Locations || st.Symbolized != 0 {
		t.Errorf("Stats %+v", st)
	}
	if p.String() != before {
		t.Errorf("the profile changed")
	}

	// WithMain: the main binary, among the tables or not.
	for _, tabs := range [][]*gosym.Table{nil, {tab}} {
		q := p.Copy()
		st, err := profiles.Symbolize(q, tabs, profiles.WithMain(tab))
		if err != nil || st.Symbolized == 0 {
			t.Fatalf("WithMain, %d tables: %+v, %v", len(tabs), st, err)
		}
		got := linesOf(q)
		for id, w := range want {
			if !slices.Equal(got[id], w) {
				t.Errorf("WithMain, %d tables: location %d: %v, want %v", len(tabs), id, got[id], w)
			}
		}
	}

	// A profile without mappings (link-time addresses) and two tables:
	// which one is unknown, unless WithMain says.
	q := stripProfile(orig)
	q.Mapping = nil
	for _, l := range q.Location {
		l.Mapping = nil
	}
	if _, err := profiles.Symbolize(q.Copy(), []*gosym.Table{tab, tab}); !errors.Is(err, profiles.ErrNoMatch) {
		t.Errorf("no mappings, two tables: %v, want ErrNoMatch", err)
	}
	if st, err := profiles.Symbolize(q, []*gosym.Table{tab, tab}, profiles.WithMain(tab)); err != nil || st.Symbolized == 0 {
		t.Errorf("no mappings, two tables, WithMain: %+v, %v", st, err)
	}

	// A profile without locations matches nothing and is no error.
	empty := &profile.Profile{SampleType: orig.SampleType, Mapping: p.Mapping}
	if _, err := profiles.Symbolize(empty, []*gosym.Table{tab}); err != nil {
		t.Errorf("a profile without locations: %v", err)
	}
}

// profileOf returns p symbolized from tab.
func profileOf(t *testing.T, p *profile.Profile, tab *gosym.Table) *profile.Profile {
	t.Helper()
	if _, err := profiles.Symbolize(p, []*gosym.Table{tab}); err != nil {
		t.Fatal(err)
	}
	return p
}
