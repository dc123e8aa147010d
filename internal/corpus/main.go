// Command corpus builds the corpus of Go binaries in testdata/corpus.
//
// Usage (from anywhere inside the repository):
//
//	go run ./internal/corpus [-out testdata/corpus] [-only REGEXP] [-budget BYTES] [-force]
//
// For every entry of the matrix (matrix.go) it fetches the Go release
// from the module proxy as the module golang.org/toolchain (reusing the
// module cache), builds the test program testdata/src/gopath/src/gosymtest
// with that release's own go command (module mode for Go 1.13+, GOPATH
// mode before), checks the binary's pclntab magic, byte order and
// pointer size and, for Go 1.13+, its build info against the release,
// runs "-selfreport" on binaries this machine can run, and writes
// gzip-compressed binaries and reports plus manifest.json.
//
// It is idempotent: an entry whose files exist and whose build
// fingerprint (release, target, flags, source hash) is unchanged is not
// rebuilt. Entries are kept in matrix order while the corpus stays
// within the size budget; the first entry that does not fit and all
// after it are dropped (and listed as dropped in the manifest).
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/gosym-dev/gosym/internal/hostrun"
	"github.com/gosym-dev/gosym/internal/testcorpus"
)

const srcRel = "testdata/src/gopath/src/gosymtest"

var (
	outFlag    = flag.String("out", "testdata/corpus", "output directory (relative paths are relative to the repository root)")
	setFlag    = flag.String("set", "", `entries to build: "compact" (the committed corpus, matrix.go's compact list) or "full" (the whole matrix); default "full" with -budget 0, else "compact"`)
	onlyFlag   = flag.String("only", "", "build only entries whose name matches this regexp; keep the others as they are")
	budgetFlag = flag.Int64("budget", 19_850_000, "size budget in bytes for the output directory (0: none)")
	forceFlag  = flag.Bool("force", false, "rebuild entries even if up to date")
	jobsFlag   = flag.Int("j", runtime.NumCPU(), "number of builds run at the same time (entries of one release and target are built one after the other)")
	gzipFlag   = flag.Int("gzip", 0, "gzip level of the output files (0: best compression for the compact set, best speed for the full matrix)")
	workFlag   = flag.String("work", filepath.Join(os.TempDir(), "gosym-corpus"), "work directory (a fixed path keeps the file names recorded in binaries stable)")
)

var (
	repoRoot  string
	workDir   string
	goCache   string
	hostGo    string // version of the go command on PATH
	hostRoot  string
	gzipLevel int
)

// result is the outcome of one entry.
type result struct {
	e     testcorpus.Entry
	err   error
	built bool
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("corpus: ")
	flag.Parse()
	start := time.Now()

	var err error
	if repoRoot, err = findRepoRoot(); err != nil {
		log.Fatal(err)
	}
	out := *outFlag
	if !filepath.IsAbs(out) {
		out = filepath.Join(repoRoot, out)
	}
	workDir = *workFlag
	var only *regexp.Regexp
	if *onlyFlag != "" {
		only = regexp.MustCompile(*onlyFlag)
	}
	set := *setFlag
	if set == "" {
		set = map[bool]string{true: "full", false: "compact"}[*budgetFlag == 0]
	}
	var specs []spec
	switch set {
	case "full":
		specs = fullMatrix()
	case "compact":
		specs = compactSet()
	default:
		log.Fatalf("-set %q: want compact or full", set)
	}
	if gzipLevel = *gzipFlag; gzipLevel == 0 {
		gzipLevel = map[bool]int{true: gzip.BestSpeed, false: gzip.BestCompression}[set == "full"]
	}
	hostGo = strings.TrimSpace(goEnv("GOVERSION"))
	hostRoot = strings.TrimSpace(goEnv("GOROOT"))
	goCache = strings.TrimSpace(goEnv("GOCACHE"))
	if srcHash, err = hashTree(filepath.Join(repoRoot, srcRel)); err != nil {
		log.Fatal(err)
	}
	if err := prepareWork(); err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		log.Fatal(err)
	}

	old := map[string]testcorpus.Entry{}
	if data, err := os.ReadFile(filepath.Join(out, testcorpus.ManifestName)); err == nil {
		var m testcorpus.Manifest
		if err := json.Unmarshal(data, &m); err != nil {
			log.Fatalf("existing manifest: %v", err)
		}
		for _, e := range m.Entries {
			old[e.Name] = e
		}
	}

	// Decide what to build; group the builds by release and target.
	results := make([]*result, len(specs))
	var groups [][]int
	groupOf := map[string]int{}
	for i, s := range specs {
		name := s.name()
		prev, havePrev := old[name]
		upToDate := havePrev && prev.Spec == s.fingerprint(buildMode(s)) && filesExist(out, prev)
		switch {
		case only != nil && !only.MatchString(name):
			if havePrev && filesExist(out, prev) {
				results[i] = &result{e: prev}
			}
			continue
		case upToDate && !*forceFlag:
			results[i] = &result{e: prev}
			continue
		}
		g, ok := groupOf[s.group()]
		if !ok {
			g = len(groups)
			groupOf[s.group()] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}

	// Fetch the toolchains in the background, in the order they are
	// needed, while the first ones build.
	go func() {
		sem := make(chan bool, 3)
		for _, g := range groups {
			v := specs[g[0]].Go
			sem <- true
			go func() { toolchain(v); <-sem }()
		}
	}()

	// Build: each worker takes the next group and builds its entries in
	// order (default before stripped, which then only links).
	next := make(chan []int)
	var wg sync.WaitGroup
	for w := 0; w < max(*jobsFlag, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range next {
				for _, i := range g {
					s := specs[i]
					t0 := time.Now()
					e, err := build(s, out)
					results[i] = &result{e: e, err: err, built: true}
					if err != nil {
						log.Printf("%-40s FAILED: %v", s.name(), err)
						continue
					}
					log.Printf("%-40s built in %v: magic %s %s q=%d p=%d (%s) dwarf=%v %s -> %d bytes", s.name(), time.Since(t0).Round(100*time.Millisecond),
						e.PclntabMagic, e.ByteOrder, e.Quantum, e.PtrSize, e.PclntabFoundBy, e.HasDWARF, e.SelfReportMethod, e.CompressedBytes)
				}
			}
		}()
	}
	for _, g := range groups {
		next <- g
	}
	close(next)
	wg.Wait()

	man := &testcorpus.Manifest{
		Comment:     "Go binaries built from testdata/src by many releases; see README.md. Generated by go run ./internal/corpus.",
		Source:      srcRel,
		Set:         set,
		BudgetBytes: *budgetFlag,
	}
	// Room for manifest.json and README.md.
	var total int64 = 64 << 10
	full := false
	failed := 0
	for i, s := range specs {
		name := s.name()
		r := results[i]
		switch {
		case r == nil:
			man.Dropped = append(man.Dropped, testcorpus.Dropped{Name: name, Reason: "not built (-only)"})
			continue
		case r.err != nil:
			man.Dropped = append(man.Dropped, testcorpus.Dropped{Name: name, Reason: "build failed: " + firstLine(r.err.Error())})
			failed++
			continue
		case full:
			man.Dropped = append(man.Dropped, testcorpus.Dropped{Name: name, Reason: "size budget"})
			continue
		}
		e := r.e
		if !r.built {
			log.Printf("%-40s up to date", name)
		}
		e.CompressedBytes = fileSize(out, e.BinaryFile) + fileSize(out, e.SelfReportFile)
		if *budgetFlag > 0 && total+e.CompressedBytes > *budgetFlag {
			log.Printf("%-40s dropped: %d bytes would exceed the budget (%d used)", name, e.CompressedBytes, total)
			man.Dropped = append(man.Dropped, testcorpus.Dropped{Name: name, Reason: "size budget", Bytes: e.CompressedBytes})
			full = true
			continue
		}
		total += e.CompressedBytes
		man.Entries = append(man.Entries, e)
	}

	// Remove files no entry refers to.
	keep := map[string]bool{}
	for _, e := range man.Entries {
		keep[e.BinaryFile] = true
		keep[e.SelfReportFile] = true
	}
	files, _ := os.ReadDir(out)
	for _, f := range files {
		if strings.HasSuffix(f.Name(), ".gz") && !keep[f.Name()] {
			os.Remove(filepath.Join(out, f.Name()))
		}
	}
	man.TotalBytes = 0
	for _, e := range man.Entries {
		man.TotalBytes += e.CompressedBytes
	}
	data, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	data = append(data, '\n')
	if err := os.WriteFile(filepath.Join(out, testcorpus.ManifestName), data, 0o644); err != nil {
		log.Fatal(err)
	}
	var dirBytes int64
	files, _ = os.ReadDir(out)
	for _, f := range files {
		dirBytes += fileSize(out, f.Name())
	}
	log.Printf("%s set: %d entries, %d dropped; %s holds %d bytes; took %v", set, len(man.Entries), len(man.Dropped), out, dirBytes, time.Since(start).Round(time.Second))
	if failed > 0 {
		log.Fatalf("%d entries failed", failed)
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func fileSize(dir, name string) int64 {
	if name == "" {
		return 0
	}
	fi, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		return 0
	}
	return fi.Size()
}

func filesExist(dir string, e testcorpus.Entry) bool {
	if fileSize(dir, e.BinaryFile) == 0 {
		return false
	}
	return e.SelfReportFile == "" || fileSize(dir, e.SelfReportFile) > 0
}

func findRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module github.com/gosym-dev/gosym")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run inside the gosym repository")
		}
		dir = parent
	}
}

func goEnv(key string) string {
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		log.Fatalf("go env %s: %v", key, err)
	}
	return string(out)
}

// hashTree hashes the names and contents of the files under dir.
func hashTree(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(rel), len(data))
		h.Write(data)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:16], err
}

// prepareWork copies the test program to the fixed work paths:
// work/gopath/src/gosymtest for GOPATH mode and work/mod/gosymtest for
// module mode, and writes the go.mod files of module mode: the directory's
// own says "go 1.13" (used by go1.13); later releases read their own
// work/modfiles/go1.N.mod through -modfile, so that builds by several
// releases can run at the same time in the one directory whose path the
// binaries record.
func prepareWork() error {
	src := filepath.Join(repoRoot, srcRel)
	for _, dst := range []string{filepath.Join(workDir, "gopath", "src", "gosymtest"), filepath.Join(workDir, "mod", "gosymtest")} {
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
		err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, path)
			target := filepath.Join(dst, rel)
			if d.IsDir() {
				return os.MkdirAll(target, 0o755)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		})
		if err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(workDir, "mod", "gosymtest", "go.mod"), []byte(goMod(13)), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(workDir, "modfiles"), 0o755); err != nil {
		return err
	}
	for _, v := range releases {
		if m := testcorpus.MinorVersion(v); m >= 14 {
			if err := os.WriteFile(modFile(m), []byte(goMod(m)), 0o644); err != nil {
				return err
			}
		}
	}
	return os.MkdirAll(filepath.Join(workDir, "bin"), 0o755)
}

func goMod(minor int) string { return fmt.Sprintf("module gosymtest\n\ngo 1.%d\n", minor) }

func modFile(minor int) string {
	return filepath.Join(workDir, "modfiles", fmt.Sprintf("go1.%d.mod", minor))
}

// buildMode returns "module" for Go 1.13+ and "gopath" before.
// (Go 1.19 builds fine in module mode here: its failure in module mode
// happens only when GOROOT lies inside the build's GOMODCACHE, and the
// builds below use a GOPATH of their own.)
func buildMode(s spec) string {
	if testcorpus.MinorVersion(s.Go) >= 13 {
		return "module"
	}
	return "gopath"
}

// toolchain returns the GOROOT of release v: the installed Go if it is
// that release, else the module golang.org/toolchain from the module
// cache (downloaded if needed), with execute bits set as the go command
// itself does on first use. Each release is fetched once.
func toolchain(v string) (string, error) {
	tcMu.Lock()
	t := tcs[v]
	if t == nil {
		t = new(toolchainOnce)
		tcs[v] = t
	}
	tcMu.Unlock()
	t.once.Do(func() {
		t0 := time.Now()
		t.dir, t.err = fetchToolchain(v)
		if v != hostGo && t.err == nil {
			log.Printf("%-40s toolchain ready in %v", v, time.Since(t0).Round(100*time.Millisecond))
		}
	})
	return t.dir, t.err
}

type toolchainOnce struct {
	once sync.Once
	dir  string
	err  error
}

var (
	tcMu sync.Mutex
	tcs  = map[string]*toolchainOnce{}
)

func fetchToolchain(v string) (string, error) {
	if v == hostGo {
		return hostRoot, nil
	}
	mod := "golang.org/toolchain@v0.0.1-" + v + "." + runtime.GOOS + "-" + runtime.GOARCH
	cmd := exec.Command("go", "mod", "download", "-json", mod)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil || info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %v %s", mod, err, info.Error)
	}
	goCmd := filepath.Join(info.Dir, "bin", "go")
	if fi, err := os.Stat(goCmd); err == nil && fi.Mode()&0o111 == 0 {
		// pkg/tool first, bin last, like cmd/go/internal/toolchain.
		for _, sub := range []string{"pkg/tool", "bin"} {
			filepath.WalkDir(filepath.Join(info.Dir, sub), func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if fi, err := os.Stat(path); err == nil {
						os.Chmod(path, fi.Mode()&0o777|0o111)
					}
				}
				return nil
			})
		}
	}
	return info.Dir, nil
}

// build builds, verifies and writes one entry.
func build(s spec, out string) (testcorpus.Entry, error) {
	name := s.name()
	e := testcorpus.Entry{
		Name: name, GoVersion: s.Go, GOOS: s.GOOS, GOARCH: s.GOARCH, Variant: s.Variant,
		BuildMode: buildMode(s), BuildFlags: s.Flags, CgoEnabled: s.Cgo,
		Spec: s.fingerprint(buildMode(s)),
	}
	goroot, err := toolchain(s.Go)
	if err != nil {
		return e, err
	}
	var dir, gopath string
	args := []string{"build", "-o", ""}
	if e.BuildMode == "module" {
		dir = filepath.Join(workDir, "mod", "gosymtest")
		// A GOPATH (so GOMODCACHE) of its own: Go 1.19 fails in module
		// mode when GOROOT lies inside GOMODCACHE.
		gopath = filepath.Join(workDir, "modpath")
		if m := s.minor(); m >= 14 {
			args = append(args, "-modfile="+modFile(m))
		}
	} else {
		gopath = filepath.Join(workDir, "gopath")
		dir = filepath.Join(gopath, "src", "gosymtest")
		if s.minor() >= 5 && s.minor() < 10 && (s.GOOS != "linux" || s.GOARCH != "amd64") {
			// No build cache before 1.10 and no packages for other
			// targets in the distribution: keep the compiled standard
			// library for the stripped twin (binaries are the same).
			args = append(args, "-i", "-pkgdir", filepath.Join(workDir, "pkg", s.Go+"_"+s.GOOS+"_"+s.GOARCH))
		}
	}
	binPath := filepath.Join(workDir, "bin", name)
	os.Remove(binPath)
	args[2] = binPath
	args = append(args, s.Flags...)
	if s.Tags != "" {
		args = append(args, "-tags", s.Tags)
	}
	args = append(args, ".")
	cmd := exec.Command(filepath.Join(goroot, "bin", "go"), args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + filepath.Join(goroot, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"GOROOT=" + goroot,
		"GOPATH=" + gopath,
		"GOCACHE=" + goCache,
		"GOENV=off", // the machine's env file sets GOFLAGS=-buildvcs=false, which old releases reject
		"GOFLAGS=",
		"GOTOOLCHAIN=local",
		"GOPROXY=off",
		"GO111MODULE=" + map[bool]string{true: "on", false: "off"}[e.BuildMode == "module"],
		"GOOS=" + s.GOOS,
		"GOARCH=" + s.GOARCH,
	}
	if s.Cgo != "" {
		cmd.Env = append(cmd.Env, "CGO_ENABLED="+s.Cgo)
	}
	cmd.Env = append(cmd.Env, s.Env...)
	if o, err := cmd.CombinedOutput(); err != nil {
		return e, fmt.Errorf("go build: %v\n%s", err, o)
	}
	bin, err := os.ReadFile(binPath)
	if err != nil {
		return e, err
	}
	if err := verify(s, bin, &e); err != nil {
		return e, err
	}
	var report []byte
	if s.selfReports() {
		if report, err = selfReport(s, binPath, &e); err != nil {
			return e, err
		}
	}
	sum := sha256.Sum256(bin)
	e.BinarySize = int64(len(bin))
	e.BinarySHA256 = hex.EncodeToString(sum[:])
	e.BinaryFile = name + ".bin.gz"
	if err := os.WriteFile(filepath.Join(out, e.BinaryFile), testcorpus.GzipLevel(bin, gzipLevel), 0o644); err != nil {
		return e, err
	}
	if report != nil {
		e.SelfReportFile = name + ".selfreport.gz"
		if err := os.WriteFile(filepath.Join(out, e.SelfReportFile), testcorpus.GzipLevel(report, gzipLevel), 0o644); err != nil {
			return e, err
		}
	} else {
		os.Remove(filepath.Join(out, name+".selfreport.gz"))
	}
	e.CompressedBytes = fileSize(out, e.BinaryFile) + fileSize(out, e.SelfReportFile)
	return e, nil
}

var bigEndianArch = map[string]bool{"ppc64": true, "s390x": true, "mips": true, "mips64": true}
var ptr4Arch = map[string]bool{"386": true, "arm": true, "mips": true, "mipsle": true, "wasm": false}

// verify checks that the binary was built by the release it claims.
func verify(s spec, bin []byte, e *testcorpus.Entry) error {
	h, err := testcorpus.FindPclntab(bin)
	if err != nil {
		return err
	}
	e.PclntabMagic = fmt.Sprintf("%#x", h.Magic)
	e.ByteOrder = h.ByteOrder()
	e.Quantum = h.Quantum
	e.PtrSize = h.PtrSize
	e.PclntabFoundBy = h.FoundBy
	e.PclntabOffset = h.Offset
	e.HasDWARF, e.HasSymbols = testcorpus.HasDWARF(bin)
	minor := testcorpus.MinorVersion(s.Go)
	if want := testcorpus.ExpectedMagic(minor); h.Magic != want {
		return fmt.Errorf("pclntab magic %#x, want %#x for %s", h.Magic, want, s.Go)
	}
	if h.BigEndian != bigEndianArch[s.GOARCH] {
		return fmt.Errorf("pclntab byte order %s for %s", h.ByteOrder(), s.GOARCH)
	}
	if wantPtr := map[bool]int{true: 4, false: 8}[ptr4Arch[s.GOARCH]]; h.PtrSize != wantPtr {
		return fmt.Errorf("pointer size %d for %s", h.PtrSize, s.GOARCH)
	}
	if minor >= 13 {
		v := ""
		if bi, err := buildinfo.Read(bytes.NewReader(bin)); err == nil {
			v = bi.GoVersion
		} else if v = scanBuildInfo(bin); v == "" {
			// debug/buildinfo (as of go1.26.8) does not read Plan 9
			// files, hence the scan, which finds only the 1.18+ blob
			// with inline strings; 1.13–1.17 Plan 9 binaries are
			// checked like old releases below.
			if s.GOOS != "plan9" || minor >= 18 {
				return fmt.Errorf("build info: %v", err)
			}
			v = s.Go
			if !bytes.Contains(bin, []byte(s.Go)) {
				return fmt.Errorf("version string %s not in binary", s.Go)
			}
		}
		if v != s.Go {
			return fmt.Errorf("build info says %s", v)
		}
	} else if !bytes.Contains(bin, []byte(s.Go+"\x00")) && !bytes.Contains(bin, []byte(s.Go)) {
		return fmt.Errorf("version string %s not in binary", s.Go)
	}
	return nil
}

// selfReport runs the binary with -selfreport, checks the result and
// returns it in the corpus's format (format 2, testcorpus.EncodeReport).
func selfReport(s spec, binPath string, e *testcorpus.Entry) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd, err := hostrun.Command(ctx, s.GOARCH, binPath, "-selfreport")
	if err != nil {
		return nil, err
	}
	cmd.Dir = workDir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, hostrun.Env(s.GOARCH)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("-selfreport: %v\n%s", err, stderr.Bytes())
	}
	r, err := testcorpus.ParseReport(out)
	if err != nil {
		return nil, fmt.Errorf("-selfreport output: %v", err)
	}
	if r.GoVersion != s.Go || r.GOARCH != s.GOARCH {
		return nil, fmt.Errorf("self-report says %s %s", r.GoVersion, r.GOARCH)
	}
	e.SelfReportMethod = r.Method
	enc := testcorpus.EncodeReport(r)
	if r2, err := testcorpus.ParseReport(enc); err != nil || !reflect.DeepEqual(r, r2) {
		return nil, fmt.Errorf("self-report does not survive format 2 (%v)", err)
	}
	return enc, nil
}

// scanBuildInfo finds the one build-info blob with inline strings
// (Go 1.18+) anywhere in bin and returns its Go version, or "".
func scanBuildInfo(bin []byte) string {
	magic := []byte("\xff Go buildinf:")
	i := bytes.Index(bin, magic)
	if i < 0 || bytes.Contains(bin[i+1:], magic) || i+33 > len(bin) || bin[i+15]&2 == 0 {
		return ""
	}
	n, w := binary.Uvarint(bin[i+32:])
	if w <= 0 || i+32+w+int(n) > len(bin) {
		return ""
	}
	return string(bin[i+32+w : i+32+w+int(n)])
}
