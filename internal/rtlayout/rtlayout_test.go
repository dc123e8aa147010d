package rtlayout

import "testing"

func TestMinor(t *testing.T) {
	for in, want := range map[string]string{
		"go1.21.13": "go1.21", "go1.22rc1": "go1.22", "go1.9": "go1.9", "go1.": "", "devel +x": "", "": "",
	} {
		if got := Minor(in); got != want {
			t.Errorf("Minor(%q) = %q, want %q", in, got, want)
		}
	}
	if !Less("go1.9", "go1.12") || Less("go1.12", "go1.9") {
		t.Error("Less does not order go1.9 before go1.12")
	}
}

// TestLayouts checks the generated table: every field inside its
// structure, the statuses where the runtime has them, and the wait
// reasons every release prints.
func TestLayouts(t *testing.T) {
	seen := map[string]bool{}
	for _, l := range Layouts {
		key := l.Release + "/" + l.GOARCH
		if seen[key] {
			t.Errorf("%s twice", key)
		}
		seen[key] = true
		ptr := int32(8)
		switch l.GOARCH {
		case "386", "arm", "mips", "mipsle":
			ptr = 4
		}
		for name, off := range map[string]int32{
			"stack.lo": l.GStackLo, "stack.hi": l.GStackHi, "sched.sp": l.GSchedSP, "sched.pc": l.GSchedPC,
			"sched.lr": l.GSchedLR, "sched.g": l.GSchedG, "syscallsp": l.GSyscallSP, "syscallpc": l.GSyscallPC,
			"m": l.GM, "gopc": l.GGopc, "startpc": l.GStartPC,
		} {
			if off < 0 || off+ptr > l.GSize || off%ptr != 0 {
				t.Errorf("%s: g.%s at %d (g is %d bytes)", key, name, off, l.GSize)
			}
		}
		if l.GGoid < 0 || l.GGoid+8 > l.GSize || l.GAtomicStatus < 0 || l.GAtomicStatus+4 > l.GSize || l.GWaitReason < 0 || l.GWaitReason >= l.GSize {
			t.Errorf("%s: goid %d, atomicstatus %d, waitreason %d (g is %d bytes)", key, l.GGoid, l.GAtomicStatus, l.GWaitReason, l.GSize)
		}
		if (l.GParentGoid >= 0) != !Less(l.Release, "go1.21") {
			t.Errorf("%s: parentGoid at %d", key, l.GParentGoid)
		}
		for name, off := range map[string]int32{"g0": l.MG0, "curg": l.MCurg, "procid": l.MProcid, "gsignal": l.MGsignal, "alllink": l.MAlllink} {
			if off < 0 || off+ptr > l.MSize {
				t.Errorf("%s: m.%s at %d (m is %d bytes)", key, name, off, l.MSize)
			}
		}
		st := l.GStatusStrings
		if len(st) < 9 || st[1] != "runnable" || st[2] != "running" || st[3] != "syscall" || st[4] != "waiting" || st[6] != "dead" {
			t.Errorf("%s: statuses %q", key, st)
		}
		found := map[string]bool{}
		for _, w := range l.WaitReasonStrings {
			found[w] = true
		}
		for _, w := range []string{"chan receive", "chan send", "select", "sleep", "IO wait", "semacquire"} {
			if !found[w] {
				t.Errorf("%s: no wait reason %q", key, w)
			}
		}
	}
	for _, rel := range []string{"go1.12", "go1.16", "go1.21", "go1.26", "go1.27"} {
		for _, arch := range []string{"amd64", "arm64"} {
			if !seen[rel+"/"+arch] {
				t.Errorf("no layout for %s on %s", rel, arch)
			}
		}
	}
}
