package gosym

import "testing"

// TestOpenAllocations checks that opening a table allocates as much for
// the go command as for a hello-world program: the work of Open does not
// grow with the binary.
func TestOpenAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	allocs := map[string]float64{}
	for _, name := range []string{"hello", "go"} {
		path := benchBinary(t, name)
		allocs[name] = testing.AllocsPerRun(10, func() {
			tab, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			tab.Close()
		})
	}
	if allocs["hello"] != allocs["go"] {
		t.Errorf("Open allocates %v times for hello, %v for go", allocs["hello"], allocs["go"])
	}
	t.Logf("Open allocates %v times", allocs["go"])
}
