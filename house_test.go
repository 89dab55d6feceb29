package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/agentty/agentty"

// ourPackages are the module's packages (folders, "." for main) with the
// module's packages each one's non-test files import, and their files.
func ourPackages(t *testing.T) (imports map[string]map[string]bool, files map[string][]string) {
	t.Helper()
	imports, files = map[string]map[string]bool{}, map[string][]string{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		files[dir] = append(files[dir], p)
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if imports[dir] == nil {
			imports[dir] = map[string]bool{}
		}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if rest, ok := strings.CutPrefix(path, module+"/"); ok {
				imports[dir][rest] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return imports, files
}

// within reports whether package p is dir or in its subtree.
func within(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// frontEnds are the rooms between cli and app: each is built from app's
// kit, and none imports another (issue 53's third house).
var frontEnds = []string{"worker", "acp", "console", "fleet"}

// TestImportsRunOneWay: the rooms of ARCHITECTURE.md import one way. The
// engine's subtree imports nothing of ours outside it; ui imports the
// engine alone, and only app, the console and fleet import ui; only main imports
// cli; only cli imports a front end (worker, acp, console, fleet), and only cli
// and the front ends import
// app, which imports none of them; config stands on the engine alone,
// agents, commands and plugins on config and the engine.
func TestImportsRunOneWay(t *testing.T) {
	imports, _ := ourPackages(t)
	if len(imports) < 15 {
		t.Fatalf("found only %d packages: %v", len(imports), imports)
	}
	allowed := func(pkg, dep string) bool {
		switch {
		case within(pkg, "engine"):
			return within(dep, "engine")
		case pkg == "ui":
			return within(dep, "engine")
		case pkg == "config":
			return within(dep, "engine") || within(dep, "internal")
		case pkg == "agents" || pkg == "hooks":
			return dep == "config" || dep == "tools" || within(dep, "engine") || within(dep, "internal")
		case pkg == "commands" || pkg == "plugins":
			return dep == "config" || within(dep, "engine") || within(dep, "internal")
		}
		switch {
		case dep == "cli":
			return pkg == "."
		case slices.Contains(frontEnds, dep):
			return pkg == "cli"
		case dep == "app":
			return pkg == "cli" || slices.Contains(frontEnds, pkg)
		case dep == "ui":
			return pkg == "app" || pkg == "console" || pkg == "fleet"
		}
		return pkg != "."
	}
	for pkg, deps := range imports {
		for dep := range deps {
			if !allowed(pkg, dep) {
				t.Errorf("%s imports %s: the imports run cli → app → config, agents, eval → the packages below → engine", pkg, dep)
			}
		}
	}
	if !imports["."]["cli"] || len(imports["."]) != 1 {
		t.Errorf("main imports %v; want cli alone", imports["."])
	}
}

// TestHouseIsSmall: main is main.go alone, no file is over 500 lines (a
// command's file over 350: what it computes belongs to the room that owns
// it) and no function over 80, outside tests; app, the kit the front ends
// build from, stays at 2,000 lines.
func TestHouseIsSmall(t *testing.T) {
	_, files := ourPackages(t)
	if got := files["."]; len(got) != 1 || got[0] != "main.go" {
		t.Errorf("package main has %v; want main.go alone", got)
	}
	kit := 0
	for pkg, ps := range files {
		for _, p := range ps {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			n := strings.Count(string(b), "\n")
			if most := map[bool]int{true: 350, false: 500}[pkg == "cli"]; n > most {
				t.Errorf("%s has %d lines: split it (%d at most)", p, n, most)
			}
			if pkg == "app" {
				kit += n
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, b, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok {
					if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > 80 {
						t.Errorf("%s: %s has %d lines: split it (80 at most)", fset.Position(fd.Pos()), fd.Name.Name, n)
					}
				}
			}
		}
	}
	if kit > 2000 {
		t.Errorf("app has %d lines: the kit is at most 2,000; what one front end needs goes to its room", kit)
	}
}
