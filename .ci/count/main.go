// Command count re-counts the size of baton's library: its exported
// identifiers and its lines of code, per package and in all. It is not a CI
// gate; it is how anyone re-counts the targets of the simplification.
//
//	go run ./.ci/count          # the library (no test kits, examples or internal packages)
//	go run ./.ci/count -all     # every non-test package, test kits and examples included
//
// Exported identifiers: top-level funcs, types, consts and vars, exported
// methods of exported types, and the exported methods of exported
// interfaces. Lines of code: non-blank lines that are not only a comment, in
// non-test .go files. Library packages: not under examples/ or cmd/, and not
// a test kit (a package whose name ends in "test"). Packages under
// internal/ are library code: their lines count, their exports do not
// (nothing outside the module can name them).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

func main() {
	all := flag.Bool("all", false, "count every non-test package, test kits, examples and internal packages included")
	flag.Parse()
	type row struct {
		dir          string
		exports, loc int
	}
	var rows []row
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		if !*all && !library(path) {
			return nil
		}
		ex, loc, ok, err := countDir(path)
		if err != nil {
			return err
		}
		if ok {
			if !*all && internal(path) {
				ex = 0
			}
			rows = append(rows, row{path, ex, loc})
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "count:", err)
		os.Exit(1)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].dir < rows[j].dir })
	var te, tl int
	fmt.Printf("%-32s %8s %8s\n", "package", "exports", "lines")
	for _, r := range rows {
		fmt.Printf("%-32s %8d %8d\n", r.dir, r.exports, r.loc)
		te += r.exports
		tl += r.loc
	}
	fmt.Printf("%-32s %8d %8d\n", "total", te, tl)
}

// library reports whether the package in dir counts as library code.
func library(dir string) bool {
	parts := strings.Split(filepath.ToSlash(dir), "/")
	for _, p := range parts {
		if p == "examples" || p == "cmd" {
			return false
		}
	}
	return !strings.HasSuffix(parts[len(parts)-1], "test")
}

// internal reports whether the package in dir is under an internal/.
func internal(dir string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(dir), "/"), "internal")
}

// countDir counts the non-test Go files of one directory; ok is false when it
// holds none, or only a main package.
func countDir(dir string) (exports, loc int, ok bool, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, false, err
	}
	fset := token.NewFileSet()
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		path := filepath.Join(dir, n)
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return 0, 0, false, err
		}
		if f.Name.Name == "main" {
			return 0, 0, false, nil
		}
		ok = true
		exports += exported(f)
		l, err := codeLines(path)
		if err != nil {
			return 0, 0, false, err
		}
		loc += l
	}
	return exports, loc, ok, nil
}

// exported counts the exported identifiers a file declares.
func exported(f *ast.File) int {
	n := 0
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil || receiverExported(d.Recv) {
				n++
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					n++
					if it, isIface := s.Type.(*ast.InterfaceType); isIface {
						for _, m := range it.Methods.List {
							for _, name := range m.Names {
								if name.IsExported() {
									n++
								}
							}
						}
					}
				case *ast.ValueSpec:
					for _, name := range s.Names {
						if name.IsExported() {
							n++
						}
					}
				}
			}
		}
	}
	return n
}

func receiverExported(recv *ast.FieldList) bool {
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

// codeLines counts the non-blank lines of path that are not only a comment.
func codeLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	inBlock := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if inBlock {
			if i := strings.Index(l, "*/"); i >= 0 {
				inBlock = false
				l = strings.TrimSpace(l[i+2:])
			} else {
				continue
			}
		}
		if strings.HasPrefix(l, "/*") && !strings.Contains(l, "*/") {
			inBlock = true
			continue
		}
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		n++
	}
	return n, sc.Err()
}
