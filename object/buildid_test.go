package object_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/internal/fuzzseed"
	"github.com/gosym-dev/gosym/internal/objtest"
	"github.com/gosym-dev/gosym/internal/testcorpus"
	"github.com/gosym-dev/gosym/object"
)

// buildIDTargets adds to every format's targets an ELF file with a GNU
// build ID chosen on the command line.
var buildIDTargets = append(allTargets[:len(allTargets):len(allTargets)],
	objtest.Target{GOOS: "linux", GOARCH: "amd64", Flags: []string{"-ldflags=-B=0x0123456789abcdef0011"}, Name: "linux_amd64_B"})

// TestBuildIDs compares BuildIDs with `go tool buildid` (the Go build ID)
// and `readelf -n` (the GNU build ID), on the test program built for every
// format, on the same ELF files without section headers, and on every
// binary of the committed corpus (releases 1.2–1.27).
func TestBuildIDs(t *testing.T) {
	objtest.SkipUnlessHeavy(t)
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	readelf, _ := exec.LookPath("readelf")
	if readelf == "" {
		t.Log("readelf not installed: GNU build IDs are compared only where they must be absent")
	}
	check := func(t *testing.T, data []byte, elf bool) (gnu, goID string) {
		path := filepath.Join(t.TempDir(), "bin")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		wantGo := goToolBuildID(t, goCmd, path)
		wantGNU := ""
		if elf && readelf != "" {
			wantGNU = readelfBuildID(t, readelf, path)
		}
		obj, err := object.NewBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		gnu, goID, err = object.BuildIDs(obj)
		if err != nil {
			t.Fatal(err)
		}
		if goID != wantGo {
			t.Errorf("Go build ID %q, go tool buildid says %q", goID, wantGo)
		}
		if (elf && readelf != "" || !elf) && gnu != wantGNU {
			t.Errorf("GNU build ID %q, readelf -n says %q", gnu, wantGNU)
		}
		if elf {
			// Without section headers, the notes are found in the segments.
			stripped, err := object.NewBytes(objtest.StripSectionHeaders(t, data))
			if err != nil {
				t.Fatal(err)
			}
			g2, o2, err := object.BuildIDs(stripped)
			if err != nil || g2 != gnu || o2 != goID {
				t.Errorf("without section headers: %q, %q, %v; want %q, %q", g2, o2, err, gnu, goID)
			}
		}
		return gnu, goID
	}
	objtest.Run(t, buildIDTargets, func(t *testing.T, tg objtest.Target, data []byte) {
		gnu, goID := check(t, data, tg.GOOS == "linux")
		if goID == "" {
			t.Errorf("no Go build ID") // every build by the installed go has one
		}
		if tg.Name == "linux_amd64_B" && gnu != "0123456789abcdef0011" {
			t.Errorf("GNU build ID %q, want the one given to -B", gnu)
		}
	})
	entries, err := testcorpus.Entries()
	if err != nil {
		t.Skipf("no corpus: %v", err)
	}
	for _, e := range entries {
		t.Run(e.Name, func(t *testing.T) {
			data, err := e.Binary()
			if err != nil {
				t.Fatal(err)
			}
			gnu, goID := check(t, data, e.GOOS == "linux")
			if e.Minor() >= 10 && goID == "" {
				t.Errorf("no Go build ID in a binary built by %s", e.GoVersion)
			}
			if e.Minor() >= 24 && e.GOOS == "linux" && readelf != "" && gnu == "" {
				t.Errorf("no GNU build ID in an ELF binary built by %s", e.GoVersion)
			}
		})
	}
}

// goToolBuildID returns what `go tool buildid` prints for path, "" when it
// finds no build ID.
func goToolBuildID(t *testing.T, goCmd, path string) string {
	out, err := exec.Command(goCmd, "tool", "buildid", path).CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("build ID not found")) || bytes.Contains(out, []byte("unrecognized file format")) {
			return ""
		}
		t.Fatalf("go tool buildid: %v\n%s", err, out)
	}
	return strings.TrimSuffix(string(out), "\n")
}

var readelfID = regexp.MustCompile(`(?m)^\s*Build ID: ([0-9a-f]+)\s*$`)

// readelfBuildID returns the GNU build ID `readelf -n` prints for path, ""
// when it prints none.
func readelfBuildID(t *testing.T, readelf, path string) string {
	out, err := exec.Command(readelf, "-n", path).CombinedOutput()
	if err != nil {
		t.Fatalf("readelf -n: %v\n%s", err, out)
	}
	if m := readelfID.FindSubmatch(out); m != nil {
		return string(m[1])
	}
	return ""
}

// FuzzBuildIDs reads the build IDs of mutated files: no panic, and IDs no
// longer than the notes that hold them allow.
func FuzzBuildIDs(f *testing.F) {
	for _, tg := range []objtest.Target{objtest.LinuxAMD64, buildIDTargets[len(buildIDTargets)-1], objtest.WindowsAMD64} {
		mini := objtest.Mini(f, objtest.Binary(f, tg))
		fuzzseed.Add(f, mini)
		if tg.GOOS == "linux" {
			fuzzseed.Add(f, objtest.StripSectionHeaders(f, mini))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := object.NewBytes(data)
		if err != nil {
			return
		}
		gnu, goID, err := object.BuildIDs(obj)
		if err != nil {
			return
		}
		if len(gnu) > 2<<10 || len(gnu)%2 != 0 || len(goID) > 1<<10 {
			t.Fatalf("build IDs %q, %q", gnu, goID)
		}
	})
}
