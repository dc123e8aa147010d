// Command gen writes ../layouts.go: the offsets of the runtime's
// goroutine and thread structures (runtime.g, runtime.m) and the strings
// the runtime prints for goroutine states, for each Go release and
// architecture that package goroutines reads without DWARF.
//
// For each release it builds a tiny program with that release's own
// toolchain (golang.org/toolchain from the module proxy, as the go
// command's toolchain switching downloads it), for each architecture, and
// reads the program's DWARF: the member offsets of runtime.g, runtime.m,
// runtime.gobuf and runtime.stack, and the contents of the arrays
// runtime.gStatusStrings and runtime.waitReasonStrings from the binary's
// data. Run it from the repository root:
//
//	go run ./internal/rtlayout/gen
//
// It takes a few minutes on first use (downloading and building each
// release); -arch and -releases choose a subset, merged with the table
// already written.
package main

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/gosym-dev/gosym/internal/rtlayout"
)

// releases are the toolchains read: the last patch release of each.
var releases = []string{
	"go1.12.17", "go1.13.15", "go1.14.15", "go1.15.15", "go1.16.15", "go1.17.13",
	"go1.18.10", "go1.19.13", "go1.20.14", "go1.21.13", "go1.22.12", "go1.23.12",
	"go1.24.13", "go1.25.14", "go1.26.8", "go1.27.4",
}

var arches = []string{"amd64", "arm64", "386", "arm", "ppc64le", "s390x",
	"ppc64", "mips", "mipsle", "mips64", "mips64le", "riscv64", "loong64"}

// since holds the first release of a linux port that came after Go 1.12.
var since = map[string]string{"riscv64": "go1.14", "loong64": "go1.19"}

const prog = `package main

import "runtime"

func main() {
	go func() {}()
	runtime.Gosched()
	println("hello")
}
`

func main() {
	archFlag := flag.String("arch", strings.Join(arches, ","), "comma-separated GOARCH `list`")
	relFlag := flag.String("releases", strings.Join(releases, ","), "comma-separated release `list`")
	out := flag.String("o", "internal/rtlayout/layouts.go", "output `file`")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("gen: ")

	known := map[string]rtlayout.Layout{}
	for _, l := range rtlayout.Layouts {
		known[l.Release+"/"+l.GOARCH] = l
	}
	tmp, err := os.MkdirTemp("", "rtlayout-gen")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for _, rel := range strings.Split(*relFlag, ",") {
		goroot, err := toolchain(rel)
		if err != nil {
			log.Fatal(err)
		}
		for _, arch := range strings.Split(*archFlag, ",") {
			if first, ok := since[arch]; ok && rtlayout.Less(minor(rel), first) {
				continue
			}
			exe, err := build(tmp, goroot, rel, arch)
			if err != nil {
				log.Fatalf("%s %s: %v", rel, arch, err)
			}
			l, err := read(exe)
			if err != nil {
				log.Fatalf("%s %s: %v", rel, arch, err)
			}
			l.Release = minor(rel)
			l.GOARCH = arch
			known[l.Release+"/"+arch] = l
			log.Printf("%s %s: g is %d bytes", rel, arch, l.GSize)
		}
	}
	src, err := generate(known)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// minor returns "go1.21" for "go1.21.13".
func minor(rel string) string {
	if i := strings.LastIndexByte(rel, '.'); i > len("go1") {
		return rel[:i]
	}
	return rel
}

// toolchain returns the GOROOT of release rel: the installed one if it is
// that release, else golang.org/toolchain's module, downloaded if needed.
func toolchain(rel string) (string, error) {
	if runtime.Version() == rel {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			return "", fmt.Errorf("go env GOROOT: %v", err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	mod := "golang.org/toolchain@v0.0.1-" + rel + "." + runtime.GOOS + "-" + runtime.GOARCH
	cmd := exec.Command("go", "mod", "download", "-json", mod)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOTOOLCHAIN=local", "GOFLAGS=")
	outb, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(outb, &info); jerr != nil || info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %v %s", mod, err, info.Error)
	}
	// The module zip has no execute bits: set them, as the go command
	// does on first use.
	for _, sub := range []string{"pkg/tool", "bin"} {
		filepath.WalkDir(filepath.Join(info.Dir, sub), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := os.Stat(path); err == nil && fi.Mode()&0o111 == 0 {
					os.Chmod(path, fi.Mode()|0o111)
				}
			}
			return nil
		})
	}
	return info.Dir, nil
}

// build builds the tiny program for linux/arch with the toolchain at
// goroot, in GOPATH mode (which every release has).
func build(tmp, goroot, rel, arch string) (string, error) {
	gopath := filepath.Join(tmp, "gopath")
	src := filepath.Join(gopath, "src", "tiny")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(prog), 0o644); err != nil {
		return "", err
	}
	exe := filepath.Join(tmp, rel+"-"+arch)
	cmd := exec.Command(filepath.Join(goroot, "bin", "go"), "build", "-o", exe, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0", "GOFLAGS=",
		"GOTOOLCHAIN=local", "GOROOT="+goroot, "GOPATH="+gopath, "GO111MODULE=off", "GOENV=off",
		"GOCACHE="+filepath.Join(os.TempDir(), "gosym-rtlayout-cache", rel))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return exe, nil
}

// read reads the layout from the DWARF and data of the executable exe.
func read(exe string) (rtlayout.Layout, error) {
	var l rtlayout.Layout
	ef, err := elf.Open(exe)
	if err != nil {
		return l, err
	}
	defer ef.Close()
	d, err := ef.DWARF()
	if err != nil {
		return l, err
	}
	structs := map[string]map[string]int64{}
	sizes := map[string]int64{}
	vars := map[string]uint64{}
	counts := map[string]int64{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return l, err
		}
		if e == nil {
			break
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		switch e.Tag {
		case dwarf.TagStructType:
			switch name {
			case "runtime.g", "runtime.m", "runtime.gobuf", "runtime.stack":
				if structs[name] != nil {
					r.SkipChildren()
					continue
				}
				fields := map[string]int64{}
				sizes[name], _ = e.Val(dwarf.AttrByteSize).(int64)
				for {
					c, err := r.Next()
					if err != nil {
						return l, err
					}
					if c == nil || c.Tag == 0 {
						break
					}
					if c.Tag == dwarf.TagMember {
						n, _ := c.Val(dwarf.AttrName).(string)
						off, _ := c.Val(dwarf.AttrDataMemberLoc).(int64)
						fields[n] = off
					}
					if c.Children {
						r.SkipChildren()
					}
				}
				structs[name] = fields
				continue
			}
		case dwarf.TagVariable:
			switch name {
			case "runtime.gStatusStrings", "runtime.waitReasonStrings":
				loc, _ := e.Val(dwarf.AttrLocation).([]byte)
				if len(loc) == 1+ptrSize(ef) && loc[0] == 0x03 { // DW_OP_addr
					vars[name] = uintOf(ef, loc[1:])
				}
				if off, ok := e.Val(dwarf.AttrType).(dwarf.Offset); ok {
					if t, err := d.Type(off); err == nil {
						if at, ok := t.(*dwarf.ArrayType); ok {
							counts[name] = at.Count
						}
					}
				}
			}
		}
		if e.Children && e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
		}
	}
	field := func(s, f string) (int32, error) {
		fs, ok := structs[s]
		if !ok {
			return 0, fmt.Errorf("no %s in the DWARF", s)
		}
		off, ok := fs[f]
		if !ok {
			return 0, fmt.Errorf("no %s.%s in the DWARF", s, f)
		}
		return int32(off), nil
	}
	opt := func(s, f string) int32 {
		off, err := field(s, f)
		if err != nil {
			return -1
		}
		return off
	}
	var errs []error
	must := func(s, f string) int32 {
		off, err := field(s, f)
		if err != nil {
			errs = append(errs, err)
		}
		return off
	}
	stack, sched := must("runtime.g", "stack"), must("runtime.g", "sched")
	l.GSize = int32(sizes["runtime.g"])
	l.MSize = int32(sizes["runtime.m"])
	l.GStackLo = stack + must("runtime.stack", "lo")
	l.GStackHi = stack + must("runtime.stack", "hi")
	l.GSchedSP = sched + must("runtime.gobuf", "sp")
	l.GSchedPC = sched + must("runtime.gobuf", "pc")
	l.GSchedLR = sched + must("runtime.gobuf", "lr")
	l.GSchedG = sched + must("runtime.gobuf", "g")
	l.GSyscallSP = must("runtime.g", "syscallsp")
	l.GSyscallPC = must("runtime.g", "syscallpc")
	l.GM = must("runtime.g", "m")
	l.GAtomicStatus = must("runtime.g", "atomicstatus")
	l.GGoid = must("runtime.g", "goid")
	l.GWaitReason = must("runtime.g", "waitreason")
	l.GGopc = must("runtime.g", "gopc")
	l.GStartPC = must("runtime.g", "startpc")
	l.GParentGoid = opt("runtime.g", "parentGoid")
	l.MG0 = must("runtime.m", "g0")
	l.MCurg = must("runtime.m", "curg")
	l.MProcid = must("runtime.m", "procid")
	l.MGsignal = must("runtime.m", "gsignal")
	l.MAlllink = must("runtime.m", "alllink")
	l.MID = must("runtime.m", "id")
	if len(errs) > 0 {
		return l, errs[0]
	}
	if l.GStatusStrings, err = stringArray(ef, vars["runtime.gStatusStrings"], counts["runtime.gStatusStrings"]); err != nil {
		return l, fmt.Errorf("runtime.gStatusStrings: %v", err)
	}
	if l.WaitReasonStrings, err = stringArray(ef, vars["runtime.waitReasonStrings"], counts["runtime.waitReasonStrings"]); err != nil {
		return l, fmt.Errorf("runtime.waitReasonStrings: %v", err)
	}
	return l, nil
}

func ptrSize(ef *elf.File) int {
	if ef.Class == elf.ELFCLASS32 {
		return 4
	}
	return 8
}

func uintOf(ef *elf.File, b []byte) uint64 {
	if ptrSize(ef) == 4 {
		return uint64(ef.ByteOrder.Uint32(b))
	}
	return ef.ByteOrder.Uint64(b)
}

// readAt reads n bytes of the executable's memory image at addr.
func readAt(ef *elf.File, addr uint64, n int) ([]byte, error) {
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr+uint64(n) <= p.Vaddr+p.Filesz {
			b := make([]byte, n)
			_, err := p.ReadAt(b, int64(addr-p.Vaddr))
			return b, err
		}
	}
	return nil, fmt.Errorf("%#x+%d not in the file", addr, n)
}

// stringArray reads the [n]string array at addr.
func stringArray(ef *elf.File, addr uint64, n int64) ([]string, error) {
	if addr == 0 || n <= 0 || n > 256 {
		return nil, fmt.Errorf("no address or length in the DWARF")
	}
	ptr := ptrSize(ef)
	var out []string
	for i := 0; i < int(n); i++ {
		h, err := readAt(ef, addr+uint64(2*ptr*i), 2*ptr)
		if err != nil {
			return nil, err
		}
		p, n := uintOf(ef, h), uintOf(ef, h[ptr:])
		if n == 0 {
			out = append(out, "")
			continue
		}
		s, err := readAt(ef, p, int(n))
		if err != nil || n > 200 || !isText(s) {
			return nil, fmt.Errorf("element %d is no string (%v)", i, err)
		}
		out = append(out, string(s))
	}
	return out, nil
}

func isText(b []byte) bool {
	for _, c := range b {
		if c < ' ' || c > '~' {
			return false
		}
	}
	return true
}

// generate returns the Go source of the table.
func generate(known map[string]rtlayout.Layout) ([]byte, error) {
	keys := make([]string, 0, len(known))
	for k := range known {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := known[keys[i]], known[keys[j]]
		if a.Release != b.Release {
			return rtlayout.Less(a.Release, b.Release)
		}
		return a.GOARCH < b.GOARCH
	})
	var b bytes.Buffer
	b.WriteString("// Code generated by go run ./internal/rtlayout/gen; DO NOT EDIT.\n\npackage rtlayout\n\n")
	b.WriteString("// Layouts are the layouts of every release and architecture known, by release then GOARCH.\nvar Layouts = []Layout{\n")
	for _, k := range keys {
		l := known[k]
		fmt.Fprintf(&b, "\t{Release: %q, GOARCH: %q, GSize: %d, MSize: %d,\n", l.Release, l.GOARCH, l.GSize, l.MSize)
		fmt.Fprintf(&b, "\t\tGStackLo: %d, GStackHi: %d, GSchedSP: %d, GSchedPC: %d, GSchedLR: %d, GSchedG: %d, GSyscallSP: %d, GSyscallPC: %d,\n",
			l.GStackLo, l.GStackHi, l.GSchedSP, l.GSchedPC, l.GSchedLR, l.GSchedG, l.GSyscallSP, l.GSyscallPC)
		fmt.Fprintf(&b, "\t\tGM: %d, GAtomicStatus: %d, GGoid: %d, GWaitReason: %d, GGopc: %d, GStartPC: %d, GParentGoid: %d,\n",
			l.GM, l.GAtomicStatus, l.GGoid, l.GWaitReason, l.GGopc, l.GStartPC, l.GParentGoid)
		fmt.Fprintf(&b, "\t\tMG0: %d, MCurg: %d, MProcid: %d, MGsignal: %d, MAlllink: %d, MID: %d,\n",
			l.MG0, l.MCurg, l.MProcid, l.MGsignal, l.MAlllink, l.MID)
		fmt.Fprintf(&b, "\t\tGStatusStrings: %#v,\n", l.GStatusStrings)
		fmt.Fprintf(&b, "\t\tWaitReasonStrings: %#v},\n", l.WaitReasonStrings)
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
