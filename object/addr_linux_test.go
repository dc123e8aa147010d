package object_test

import (
	"bufio"
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/object"
)

// TestAddrOfFileOffset maps the run-time address of a function of this
// test binary to its link-time address through /proc/self/maps, and checks
// it against the symbol table.
func TestAddrOfFileOffset(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	pc := uint64(reflect.ValueOf(TestAddrOfFileOffset).Pointer())
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Skip(err)
	}
	defer maps.Close()
	var off uint64
	found := false
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		// start-end perms offset dev inode path
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		se := strings.SplitN(f[0], "-", 2)
		start, _ := strconv.ParseUint(se[0], 16, 64)
		end, _ := strconv.ParseUint(se[1], 16, 64)
		fileOff, _ := strconv.ParseUint(f[2], 16, 64)
		if pc >= start && pc < end {
			off, found = pc-start+fileOff, true
			break
		}
	}
	if !found {
		t.Skip("pc not in /proc/self/maps")
	}
	obj, err := object.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	got, err := object.AddrOfFileOffset(obj, off)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := gosym.NewTable(obj)
	if err != nil {
		t.Fatal(err)
	}
	fn, err := tab.LookupFunction("github.com/gosym-dev/gosym/object_test.TestAddrOfFileOffset")
	if err != nil {
		t.Fatal(err)
	}
	if got != fn.Entry() {
		t.Errorf("AddrOfFileOffset(%#x) = %#x, function at %#x (run-time pc %#x)", off, got, fn.Entry(), pc)
	}
	if _, err := object.AddrOfFileOffset(obj, 1<<62); err == nil {
		t.Error("no error for an offset past the file")
	}

	// The section holding the function's code is the code section,
	// whose bytes hold the function's own bytes there (the bytes at
	// the file offset the maps gave).
	m, err := object.NewMapping(obj)
	if err != nil {
		t.Fatal(err)
	}
	i, err := m.Section(fn.Entry())
	if err != nil {
		t.Fatal(err)
	}
	secs, err := obj.Sections()
	if err != nil {
		t.Fatal(err)
	}
	data, err := obj.SectionData(i)
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	s := secs[i]
	if s.Flags&object.SectionExec == 0 || string(data[fn.Entry()-s.Addr:][:16]) != string(file[off:off+16]) {
		t.Errorf("Section(%#x) = %d (%s at %#x, flags %v): not the code at file offset %#x", fn.Entry(), i, s.Name, s.Addr, s.Flags, off)
	}
	if _, err := m.Section(1 << 62); !errors.Is(err, object.ErrNotMapped) {
		t.Errorf("Section of an address in no section: %v, want ErrNotMapped", err)
	}
}
