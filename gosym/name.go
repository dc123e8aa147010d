package gosym

import "strings"

// Name is a symbol name taken apart by ParseName.
type Name struct {
	Package  string // import path, unescaped ("gopkg.in/yaml.v3"); "" when the symbol has none
	Receiver string // the receiver's type name, without '*' and type arguments; "" for a function
	Pointer  bool   // the receiver is a pointer
	Func     string // the function or method, with closure suffixes ("Pop", "F.func1", "M-fm")
	TypeArgs string // the type arguments as stored, brackets included; "" if none
	// Closure is the closure part of Func: what follows the function a
	// closure is in ("func1.2" of "F.func1.2", "gowrap1", "func1" of
	// "glob..func1"); "" for a function that is no closure.
	Closure string
}

// ParseName takes apart a function symbol name as the Go toolchains 1.2
// to 1.27 write it:
//
//	main.main                                   Package main, Func main
//	net/http.(*Server).Serve                    Receiver Server, Pointer
//	net/netip.Addr.String                       Receiver Addr
//	gopkg.in/yaml%2ev3.(*parser).parse          Package gopkg.in/yaml.v3
//	main.(*Stack[go.shape.int]).Pop             Receiver Stack, TypeArgs [go.shape.int]
//	main.(*Box[go.shape.int]).Map[go.shape.string]  (Go 1.27 generic method: both groups in TypeArgs)
//	main.F.func1.2, main.T.M-fm, main.glob..func1   closures and method values: Func F.func1.2, Closure func1.2, ...
//
// The package path ends at the first '.' after its last '/', looked for
// before any type argument (which may hold '/' and '.' themselves); the
// linker escapes the '.' of a path's last element (and '%' and a few other
// bytes) as %xx, which ParseName undoes. A bracket group in the name is
// matched with what nests in it (brackets, parentheses, braces and quoted
// struct tags).
//
// A name with more than one part after the package, "pkg.X.Y...", is a
// method Y of value receiver X unless Y marks a closure of function X:
// "funcN", "gowrapN", "deferwrapN", a number (numbered init functions
// "init.0"), or an empty part ("glob..func1"); "pkg.map.init.0", which
// initializes a map, has no receiver either ("map" is a keyword). The
// names are ambiguous in two places: a method called func1 on a value
// receiver reads as a closure, and, since Go 1.22, a closure of function
// g inlined into function F is called "F.g.func1" (g's name joins F's),
// which reads as a closure of method g of a type F. Func joined to
// Receiver is the same under either reading.
//
// Compiler-generated names (prefixes "type:" and "go:", before Go 1.20
// "type." and "go.") and names without a '.' (assembly and C functions
// such as "_rt0_amd64_linux" or "crosscall2") have no package: their
// Func is the whole name.
//
// The fields are parts of name, and ParseName does not allocate, except
// where a field cannot be one: a package path that holds an escape, and
// type arguments or a Func gathered from more than one place (the Go 1.27
// generic method above, whose TypeArgs joins its two groups; a closure
// of a generic function, "main.F[go.shape.int].func1", whose Func is
// "F.func1"). Each of these costs one allocation.
func ParseName(name string) Name {
	n := parseName(name)
	if n.Package != "" {
		n.Closure = closureOf(n.Func)
	}
	return n
}

// closureOf returns the closure part of a Func: what follows its first
// part when that is a closure's name ("funcN", "gowrapN", "deferwrapN"),
// or an empty part ("glob..func1"); not a numbered init function's number.
func closureOf(fn string) string {
	head, tail := cutPart(fn)
	if head == fn {
		return ""
	}
	if rest, ok := strings.CutPrefix(tail, "."); ok {
		return rest // glob..func1
	}
	part, _ := cutPart(tail)
	for _, p := range [...]string{"func", "gowrap", "deferwrap"} {
		if rest, ok := strings.CutPrefix(part, p); ok && len(rest) > 0 && isDigit(rest[0]) {
			return tail
		}
	}
	return ""
}

func parseName(name string) Name {
	end := packageEnd(name)
	if end < 0 {
		return Name{Func: name}
	}
	n := Name{Package: unescapePath(name[:end])}
	rest := name[end+1:]

	if strings.HasPrefix(rest, "(") {
		// (*T[...]).M or (T).M
		end := matchBracket(rest, 0)
		if end < 0 || end+1 >= len(rest) || rest[end+1] != '.' {
			n.Func = rest
			return n
		}
		recv := rest[1:end]
		if strings.HasPrefix(recv, "*") {
			n.Pointer = true
			recv = recv[1:]
		}
		n.Receiver, n.TypeArgs = splitTypeArgs(recv)
		n.setFunc(rest[end+2:])
		return n
	}

	// T.M, T[...].M, F, F[...], F.func1, F[...].func1, ...
	first, after := cutPart(rest)
	if after != "" && first != "map" && !isClosurePart(after) {
		n.Receiver, n.TypeArgs = splitTypeArgs(first)
		n.setFunc(after)
		return n
	}
	n.setFunc(rest)
	return n
}

// packageEnd returns the index of the '.' that ends the package path of
// name, or -1 if name has no package (see ParseName).
func packageEnd(name string) int {
	if isCompilerGenerated(name) {
		return -1
	}
	// The package path holds no '(' and no '[': look for its end before
	// the first of them.
	head := name
	if i := strings.IndexAny(name, "(["); i >= 0 {
		head = name[:i]
	}
	slash := strings.LastIndexByte(head, '/') + 1
	dot := strings.IndexByte(head[slash:], '.')
	if dot < 0 || slash+dot == 0 {
		return -1 // no '.', or nothing before it
	}
	return slash + dot
}

// SymbolName splits a function symbol name the way vulnerability
// databases (golang.org/x/vuln) name symbols: the package path,
// unescaped, and the rest with the receiver's parentheses and '*'
// removed and type arguments kept: "main.(*Box[go.shape.int]).Map[go.shape.string]"
// gives "main" and "Box[go.shape.int].Map[go.shape.string]",
// "net/http.(*Server).Serve.func1" gives "net/http" and "Server.Serve.func1".
// A name with no package (see ParseName) gives "" and the name.
func SymbolName(name string) (pkg, sym string) {
	end := packageEnd(name)
	if end < 0 {
		return "", name
	}
	pkg, sym = unescapePath(name[:end]), name[end+1:]
	if strings.HasPrefix(sym, "(") {
		if close := matchBracket(sym, 0); close > 0 {
			sym = strings.TrimPrefix(sym[1:close], "*") + sym[close+1:]
		}
	}
	return pkg, sym
}

// setFunc sets n.Func to s without its bracket groups, which are appended
// to n.TypeArgs. Where the groups end s one after another ("F[x]",
// "F[x][y]"), both are parts of s and nothing is allocated, unless
// n.TypeArgs already holds the receiver's; otherwise both are built in
// one allocation.
func (n *Name) setFunc(s string) {
	i := strings.IndexByte(s, '[')
	if i < 0 {
		n.Func = s
		return
	}
	end := matchBracket(s, i)
	if end < 0 {
		n.Func = s
		return
	}
	for end+1 < len(s) && s[end+1] == '[' {
		if end = matchBracket(s, end+1); end < 0 {
			break
		}
	}
	if end == len(s)-1 {
		n.Func = s[:i]
		if n.TypeArgs == "" {
			n.TypeArgs = s[i:]
		} else {
			n.TypeArgs += s[i:]
		}
		return
	}
	var b strings.Builder
	b.Grow(len(s) + len(n.TypeArgs))
	// Func: s without its groups (an unclosed one is kept).
	for rest := s; ; {
		i, end := nextGroup(rest)
		if end < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		rest = rest[end+1:]
	}
	funcLen := b.Len()
	b.WriteString(n.TypeArgs)
	for rest := s; ; {
		i, end := nextGroup(rest)
		if end < 0 {
			break
		}
		b.WriteString(rest[i : end+1])
		rest = rest[end+1:]
	}
	both := b.String()
	n.Func, n.TypeArgs = both[:funcLen], both[funcLen:]
}

// nextGroup returns the start and end of the first closed bracket group
// of s; end is -1 if there is none.
func nextGroup(s string) (start, end int) {
	start = strings.IndexByte(s, '[')
	if start < 0 {
		return -1, -1
	}
	return start, matchBracket(s, start)
}

// cutPart splits s at its first '.' outside brackets: "T[a.b].M.func1"
// gives "T[a.b]" and "M.func1".
func cutPart(s string) (first, after string) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.':
			return s[:i], s[i+1:]
		case '[':
			end := matchBracket(s, i)
			if end < 0 {
				return s, ""
			}
			i = end
		}
	}
	return s, ""
}

// splitTypeArgs splits "Stack[go.shape.int]" into "Stack" and
// "[go.shape.int]".
func splitTypeArgs(s string) (base, args string) {
	if i := strings.IndexByte(s, '['); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// isClosurePart reports whether s, what follows "pkg.X.", names a closure
// or numbered function of X rather than a method of a type X.
func isClosurePart(s string) bool {
	part, _ := cutPart(s)
	if part == "" {
		return true // glob..func1
	}
	for _, p := range [...]string{"func", "gowrap", "deferwrap"} {
		if rest, ok := strings.CutPrefix(part, p); ok && len(rest) > 0 && isDigit(rest[0]) {
			return true
		}
	}
	return isDigit(part[0])
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isCompilerGenerated reports whether name belongs to no package: the
// compiler's equality and hash functions and other "type:" and "go:"
// symbols (before Go 1.20 "type." and "go."; "go" and "type" are keywords,
// so no package has those names).
func isCompilerGenerated(name string) bool {
	for _, p := range [...]string{"type:", "go:", "type.", "go."} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// matchBracket returns the index of the bracket closing the one at s[i]
// ('[' or '('), skipping what nests inside and quoted strings; -1 if it
// is not closed.
func matchBracket(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '[', '(', '{':
			depth++
		case ']', ')', '}':
			depth--
			if depth == 0 {
				return i
			}
		case '"':
			// A struct tag: skip to its closing quote.
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		}
	}
	return -1
}

// unescapePath undoes the linker's escaping of an import path in symbol
// names (%xx for '.', '%', '"' and control and non-ASCII bytes of the last
// element). An ill-formed escape is kept as it is.
func unescapePath(p string) string {
	if strings.IndexByte(p, '%') < 0 {
		return p
	}
	b := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '%' && i+2 < len(p) {
			if hi, lo := unhex(p[i+1]), unhex(p[i+2]); hi >= 0 && lo >= 0 {
				b = append(b, byte(hi<<4|lo))
				i += 2
				continue
			}
		}
		b = append(b, p[i])
	}
	return string(b)
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}

// WithoutTypeArgs returns the name s without its type arguments, the
// bracket groups that follow a name: "main.(*Stack[go.shape.int]).Pop"
// gives "main.(*Stack).Pop", "type:.eq.[2]string" stays. Names compare
// this way in LookupFunctions. It allocates only if s has type arguments.
func WithoutTypeArgs(s string) string {
	i := typeArgsIndex(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	for i >= 0 {
		end := matchBracket(s, i)
		if end < 0 {
			break
		}
		b.WriteString(s[:i])
		s = s[end+1:]
		i = typeArgsIndex(s)
	}
	b.WriteString(s)
	return b.String()
}

// typeArgsIndex returns the index of the first '[' in s that follows a
// letter, digit, '_' or non-ASCII byte, or -1.
func typeArgsIndex(s string) int {
	for i := 1; i < len(s); i++ {
		if s[i] != '[' {
			continue
		}
		c := s[i-1]
		if c == '_' || c >= 0x80 || isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'z' {
			return i
		}
	}
	return -1
}
