package gosym

import (
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/testcorpus"
)

// TestKind checks Kind on every corpus binary against what the runtime's
// unwinder of each release does: runtime.goexit ends every goroutine's
// stack (TOPFRAME from 1.17, funcID_goexit in 1.10–1.16, the entry
// compared in topofstack before), runtime.sigpanic is injected by the
// signal handler, runtime.systemstack switches stacks. Where the release
// records funcIDs, every function Kind classifies by name must carry a
// non-zero funcID (the linker gave one to exactly these names), and only
// runtime functions may be anything but KindNormal.
func TestKind(t *testing.T) {
	forEachEntry(t, func(t *testing.T, e testcorpus.Entry, bin []byte, tab *Table) {
		want := map[string]FuncKind{
			"runtime.goexit":   KindTop,
			"runtime.mstart":   KindTop,
			"runtime.sigpanic": KindTrap,
			"runtime.mcall":    KindStackSwitch,
		}
		if e.Minor() >= 5 {
			want["runtime.systemstack"] = KindStackSwitch
		}
		if e.Minor() >= 14 {
			want["runtime.asyncPreempt"] = KindTrap
		}
		counts := map[FuncKind]int{}
		for f, err := range tab.Functions() {
			if err != nil {
				t.Fatal(err)
			}
			k := f.Kind()
			counts[k]++
			if w, ok := want[f.Name()]; ok {
				if k != w {
					t.Errorf("%s: Kind %v, want %v", f.Name(), k, w)
				}
				delete(want, f.Name())
			}
			if k != KindNormal && !strings.HasPrefix(f.Name(), "runtime.") && f.Name() != "_rt0_go" && !strings.Contains(f.Name(), "Mstart") {
				t.Errorf("%s: Kind %v", f.Name(), k)
			}
			if tab.layout.funcIDSize != 0 && k == KindNormal && f.funcID() != 0 {
				if name, ok := strings.CutPrefix(f.Name(), "runtime."); ok && kindByName(name, tab.hasFlags()) != KindNormal {
					t.Errorf("%s: funcID %d, but Kind %v", f.Name(), f.funcID(), k)
				}
			}
			if name, ok := strings.CutPrefix(f.Name(), "runtime."); ok && tab.layout.funcIDSize != 0 {
				if kindByName(name, tab.hasFlags()) != KindNormal && f.funcID() == 0 {
					t.Errorf("%s: no funcID in this release", f.Name())
				}
			}
		}
		for name := range want {
			t.Errorf("%s not found", name)
		}
		t.Logf("kinds: %v", counts)
	})
}
