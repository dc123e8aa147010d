package gosym

import (
	"runtime/debug"
	"testing"
)

// TestModuleOf checks ModuleOf's rules, one case each.
func TestModuleOf(t *testing.T) {
	modMode := &debug.BuildInfo{Path: "example.com/app", Main: debug.Module{Path: "example.com/app"},
		Deps: []*debug.Module{{Path: "golang.org/x/text"}, {Path: "golang.org/x/text/v2"}}}
	goCmd := &debug.BuildInfo{Path: "cmd/go"}
	const rt = "/usr/local/go/src/runtime/proc.go"
	for _, c := range []struct {
		bi                 *debug.BuildInfo
		runtime, pkg, file string
		want               string
	}{
		{modMode, rt, "main", "/src/app/main.go", "example.com/app"},
		{modMode, rt, "example.com/app/internal/x", "/src/app/internal/x/x.go", "example.com/app"},
		{modMode, rt, "golang.org/x/text/v2/unicode", "", "golang.org/x/text/v2"}, // the longest prefix
		{modMode, rt, "golang.org/x/textual", "", ""},                             // a prefix at '/' only
		{modMode, rt, "net/http", "", "std"},                                      // module mode: no '.' in the first element
		{goCmd, rt, "cmd/go/internal/load", "/usr/local/go/src/cmd/go/internal/load/pkg.go", "cmd"},
		{nil, rt, "strings", "/usr/local/go/src/strings/strings.go", "std"}, // GOPATH mode: by the tree
		{nil, rt, "mylib", "/home/u/go/src/mylib/lib.go", ""},
		{nil, "runtime/proc.go", "strings", "strings/strings.go", "std"}, // -trimpath
		{nil, "runtime/proc.go", "golang.org/x/text", "golang.org/x/text@v0.3.0/x.go", ""},
		{nil, "", "strings", "/usr/local/go/src/strings/strings.go", ""}, // no runtime: nothing is known std
		{modMode, rt, "", "", ""},
	} {
		if got := ModuleOf(c.bi, c.runtime, c.pkg, c.file); got != c.want {
			t.Errorf("ModuleOf(%v, %q, %q, %q) = %q, want %q", c.bi != nil, c.runtime, c.pkg, c.file, got, c.want)
		}
	}
}
