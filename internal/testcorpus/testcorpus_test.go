package testcorpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// wantMethod is the self-report method the test program uses on Go 1.minor.
func wantMethod(minor int) string {
	switch {
	case minor >= 23:
		return MethodFull
	case minor >= 12:
		return MethodInnermost
	case minor >= 9:
		return MethodFull
	case minor >= 7:
		return MethodPhysical
	default:
		return MethodFuncForPC
	}
}

func TestManifest(t *testing.T) {
	m, err := ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) == 0 {
		t.Fatal("no entries")
	}
	if m.BudgetBytes > 0 && m.TotalBytes > m.BudgetBytes {
		t.Errorf("total %d bytes exceeds the budget %d", m.TotalBytes, m.BudgetBytes)
	}
	files := map[string]bool{}
	var total int64
	for _, e := range m.Entries {
		for _, f := range []string{e.BinaryFile, e.SelfReportFile} {
			if f == "" {
				continue
			}
			if files[f] {
				t.Errorf("%s listed twice", f)
			}
			files[f] = true
			fi, err := os.Stat(Dir() + "/" + f)
			if err != nil {
				t.Error(err)
				continue
			}
			total += fi.Size()
		}
	}
	if total != m.TotalBytes {
		t.Errorf("files hold %d bytes, manifest says %d", total, m.TotalBytes)
	}
	dir, err := os.ReadDir(Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dir {
		if strings.HasSuffix(d.Name(), ".gz") && !files[d.Name()] {
			t.Errorf("%s is not in the manifest", d.Name())
		}
	}
}

// TestTestdataSize checks that testdata/ (the committed corpus and the
// sources) stays within 20 MB.
func TestTestdataSize(t *testing.T) {
	if os.Getenv(DirEnv) != "" {
		t.Skip("corpus from", DirEnv)
	}
	const limit = 20_000_000
	var total int64
	err := filepath.WalkDir(filepath.Dir(Dir()), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			total += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if total > limit {
		t.Errorf("testdata holds %d bytes, more than %d", total, limit)
	}
	t.Logf("testdata holds %d bytes", total)
}

func TestEntries(t *testing.T) {
	entries, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		e := e
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			checkEntry(t, e)
		})
	}
}

func checkEntry(t *testing.T, e Entry) {
	bin, err := e.Binary()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bin)
	if int64(len(bin)) != e.BinarySize || hex.EncodeToString(sum[:]) != e.BinarySHA256 {
		t.Errorf("binary size/sha256 differ from the manifest")
	}
	h, err := FindPclntab(bin)
	if err != nil {
		t.Fatal(err)
	}
	if h.Magic != e.Magic() || h.ByteOrder() != e.ByteOrder || h.PtrSize != e.PtrSize || h.Quantum != e.Quantum {
		t.Errorf("pclntab header %#x %s p=%d q=%d, manifest %s %s p=%d q=%d",
			h.Magic, h.ByteOrder(), h.PtrSize, h.Quantum, e.PclntabMagic, e.ByteOrder, e.PtrSize, e.Quantum)
	}
	if want := ExpectedMagic(e.Minor()); h.Magic != want {
		t.Errorf("magic %#x, want %#x for %s", h.Magic, want, e.GoVersion)
	}
	if dw, syms := HasDWARF(bin); dw != e.HasDWARF || syms != e.HasSymbols {
		t.Errorf("dwarf=%v symbols=%v, manifest %v %v", dw, syms, e.HasDWARF, e.HasSymbols)
	}
	if e.SelfReportFile == "" {
		// Stripped twins are compared with their unstripped twin instead.
		if e.GOOS == "linux" && (e.GOARCH == "amd64" || e.GOARCH == "386" && Runs386(e.Minor())) && e.Variant != "stripped" {
			t.Errorf("runnable binary without self-report")
		}
		return
	}
	r, err := e.SelfReport()
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != e.SelfReportMethod || r.Method != wantMethod(e.Minor()) {
		t.Errorf("method %q, manifest %q, want %q", r.Method, e.SelfReportMethod, wantMethod(e.Minor()))
	}
	if r.GoVersion != e.GoVersion || r.GOARCH != e.GOARCH {
		t.Errorf("report by %s %s", r.GoVersion, r.GOARCH)
	}
	if len(r.Records) < 1000 {
		t.Errorf("only %d records", len(r.Records))
	}
	// Every function of the test program is reported somewhere, and on
	// 1.23+ the five-level inline chain appears in full.
	seen := map[string]bool{}
	deepest := 0
	for _, rec := range r.Records {
		for _, f := range rec.Frames {
			seen[f.Function] = true
		}
		if len(rec.Frames) > deepest && rec.Frames[0].Function == "gosymtest/leaf.Mix" {
			deepest = len(rec.Frames)
		}
	}
	want := []string{"main.main", "main.work", "gosymtest/mid.Loop", "main.big", "main.deferred", "main.catch"}
	if e.Minor() >= 9 {
		// Before 1.9 the runtime names physical functions only, and the
		// linker drops leaf.Mix: every call to it is inlined.
		want = append(want, "gosymtest/leaf.Mix")
	}
	for _, fn := range want {
		if !seen[fn] {
			t.Errorf("%s not reported", fn)
		}
	}
	wantDepth := 0
	switch {
	case r.Method == MethodFull && e.Minor() >= 23:
		wantDepth = 5 // leaf.Mix <- leaf.Fold <- mid.Step <- mid.Outer <- main.chain
	case r.Method == MethodFull:
		wantDepth = 2 // leaf functions only are inlined before 1.12
	case e.Minor() >= 9:
		wantDepth = 1
	}
	if deepest < wantDepth {
		t.Errorf("deepest stack under leaf.Mix has %d frames, want >= %d", deepest, wantDepth)
	}
	// The stored format (2) encodes to the same bytes again.
	if data, err := Gunzip(filepath.Join(Dir(), e.SelfReportFile)); err != nil {
		t.Error(err)
	} else if !bytes.HasPrefix(data, []byte(format2+"\n")) {
		t.Errorf("self-report not stored in format 2")
	} else if !bytes.Equal(EncodeReport(r), data) {
		t.Errorf("self-report does not re-encode to the same bytes")
	}
	// Lookup agrees with the records.
	rec := r.Records[len(r.Records)/2]
	if got, ok := r.Lookup(rec.PC); !ok || got.PC != rec.PC {
		t.Errorf("Lookup(%#x) = %#x %v", rec.PC, got.PC, ok)
	}
	if _, ok := r.Lookup(r.End); ok {
		t.Errorf("Lookup(End) succeeded")
	}
}

func TestParseReport(t *testing.T) {
	const in = "gosym-selfreport 1\nmethod callersframes-full\ngoversion go1.26.8\ngoarch amd64\n" +
		"range 1000 1100\nbounds symbols\nslide 0\nrecords\n" +
		"=0\tmain.f\t/x/a.go\n=1\tmain.g\t/x/b.go\n" +
		"+0\t0:3\t1:7\n+10\t0:4\t1:7\n+5\n+20\t-\nend 4\n"
	r, err := ParseReport([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Records) != 4 || r.Records[1].PC != 0x1010 || r.Records[2].PC != 0x1015 || !r.Records[2].Gap ||
		r.Records[3].Gap || len(r.Records[3].Frames) != 0 || r.Records[0].Frames[1] != (Frame{"main.g", "/x/b.go", 7}) {
		t.Fatalf("parsed %+v", r.Records)
	}
	if rec, ok := r.Lookup(0x1012); !ok || rec.PC != 0x1010 {
		t.Errorf("Lookup(0x1012) = %+v %v", rec, ok)
	}
	// Format 2 holds the same report.
	enc := EncodeReport(r)
	r2, err := ParseReport(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, r2) {
		t.Errorf("format 2 round trip:\n%+v\n%+v", r, r2)
	}
	for i := 0; i < len(enc); i++ {
		if _, err := ParseReport(enc[:i]); err == nil {
			t.Errorf("no error for format 2 cut at %d of %d bytes", i, len(enc))
			break
		}
	}
	for _, bad := range []string{
		strings.Replace(in, "end 4", "end 5", 1),
		strings.Replace(in, "end 4\n", "", 1),
		strings.Replace(in, "+5\n", "+0\n", 1),
		strings.Replace(in, "1:7\n+10", "2:7\n+10", 1),
	} {
		if _, err := ParseReport([]byte(bad)); err == nil {
			t.Errorf("no error for\n%s", bad)
		}
	}
}
