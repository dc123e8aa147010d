package gosym

import "testing"

// fileLine is a line of a file.
type fileLine struct {
	file string
	line uint32
}

// indexedLines returns every copy of every line the line index of tab
// holds, by file (in the order of their ids), line and PC: it decodes
// every file.
func indexedLines(t testing.TB, tab *Table) []fileLine {
	t.Helper()
	x, err := tab.lineIndex()
	if err != nil {
		t.Fatal(err)
	}
	var all []fileLine
	for id, name := range x.files {
		fl := x.fileLines(tab, uint32(id))
		if fl.err != nil || fl.scan {
			t.Fatalf("%s: lines not kept (%v)", name, fl.err)
		}
		for _, c := range fl.copies {
			all = append(all, fileLine{name, c.line})
		}
	}
	return all
}
