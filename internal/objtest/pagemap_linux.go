package objtest

import (
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"testing"
)

// MappedPages reports, for the mappings of the file at path in this
// process (/proc/self/maps), how many of their pages are in the page
// table (/proc/self/pagemap): each was read since the file was mapped,
// or mapped with one that was (the kernel maps up to 64 KB around a
// faulting page). windows is how many 64 KB-aligned windows of the
// mappings hold such pages: about the number of page faults. Give a path
// no other mapping in the process shares (a copy in t.TempDir()).
func MappedPages(t testing.TB, path string) (pages, windows int) {
	t.Helper()
	lastWindow := ^uint64(0)
	eachMappedPage(t, path, func(addr, _ uint64) {
		pages++
		if w := addr >> 16; w != lastWindow {
			windows++
			lastWindow = w
		}
	})
	return pages, windows
}

// MappedOffsets returns the file offsets of the pages MappedPages
// counts, in the order of the mappings' addresses.
func MappedOffsets(t testing.TB, path string) []uint64 {
	t.Helper()
	var offs []uint64
	eachMappedPage(t, path, func(_, off uint64) { offs = append(offs, off) })
	return offs
}

// eachMappedPage calls fn with the address and file offset of each page
// of this process's mappings of path that is in the page table. It fails
// t if path is not mapped, and skips it without /proc.
func eachMappedPage(t testing.TB, path string, fn func(addr, off uint64)) {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip(err)
	}
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skip(err)
	}
	defer pm.Close()
	page := uint64(os.Getpagesize())
	found := false
	for _, l := range strings.Split(string(maps), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || f[len(f)-1] != path {
			continue
		}
		found = true
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		foff, err3 := strconv.ParseUint(f[2], 16, 64)
		if !ok || err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("/proc/self/maps: %q", l)
		}
		entries := make([]byte, (end-start)/page*8)
		if _, err := pm.ReadAt(entries, int64(start/page*8)); err != nil {
			t.Fatalf("/proc/self/pagemap: %v", err)
		}
		for i := uint64(0); i < uint64(len(entries))/8; i++ {
			if binary.LittleEndian.Uint64(entries[i*8:])&(1<<63) != 0 {
				fn(start+i*page, foff+i*page)
			}
		}
	}
	if !found {
		t.Fatalf("%s is not mapped", path)
	}
}
