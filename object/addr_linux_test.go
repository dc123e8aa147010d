package object_test

import (
	"bufio"
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
}
