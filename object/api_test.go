package object_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gosym-dev/gosym/object"
)

// TestPublicTypes checks that the types of package object are its own,
// not aliases of an internal package's (whose fields go doc would not
// show).
func TestPublicTypes(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[object.Object](),
		reflect.TypeFor[object.SectionHeader](),
		reflect.TypeFor[object.SectionFlags](),
		reflect.TypeFor[object.Symbol](),
		reflect.TypeFor[object.SymbolLookup](),
		reflect.TypeFor[object.Describer](),
		reflect.TypeFor[object.FormatError](),
	} {
		if got := typ.PkgPath(); got != "github.com/gosym-dev/gosym/object" {
			t.Errorf("%v is defined in %s", typ, got)
		}
	}
}

// TestNoInternalInAPI checks that no exported declaration of package object
// or of a backend package (its signature, type or initializer, as go doc
// shows it) names an internal package.
func TestNoInternalInAPI(t *testing.T) {
	for _, dir := range []string{".", "../elfobj", "../machoobj", "../peobj", "../plan9obj"} {
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			internal := map[string]bool{} // local names of internal imports
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if strings.Contains(path, "/internal/") {
					local := path[strings.LastIndex(path, "/")+1:]
					if imp.Name != nil {
						local = imp.Name.Name
					}
					internal[local] = true
				}
			}
			check := func(what string, n ast.Node) {
				if n == nil {
					return
				}
				ast.Inspect(n, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && internal[x.Name] {
							t.Errorf("%s: %s names %s.%s", fset.Position(sel.Pos()), what, x.Name, sel.Sel.Name)
						}
					}
					return true
				})
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() || d.Recv != nil && !exportedRecv(d.Recv) {
						continue
					}
					check(d.Name.Name, d.Type)
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() {
								check(s.Name.Name, exportedParts(s.Type))
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() {
									check(n.Name, s)
								}
							}
						}
					}
				}
			}
		}
	}
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(recv *ast.FieldList) bool {
	typ := recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}

// exportedParts returns what go doc shows of a type: a struct without its
// unexported fields, or the type itself.
func exportedParts(typ ast.Expr) ast.Node {
	st, ok := typ.(*ast.StructType)
	if !ok {
		return typ
	}
	var fields []*ast.Field
	for _, f := range st.Fields.List {
		if len(f.Names) > 0 && f.Names[0].IsExported() {
			fields = append(fields, f)
		}
	}
	return &ast.FieldList{List: fields}
}
