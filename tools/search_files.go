package tools

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"github.com/agentty/agentty/engine"
)

const maxMatches = 200

// SearchFiles searches the workspace's text files with a regular
// expression, skipping what .gitignore files ignore.
func (w *Workspace) SearchFiles() engine.Tool {
	return engine.Tool{
		Name:        "search_files",
		Description: "Search the text files of the workspace for a regular expression (Go syntax). Files that .gitignore ignores are skipped. Optional: path (a folder to search), glob (file names to search, as *.go).",
		Schema: []byte(`{"type":"object","properties":{"pattern":{"type":"string","minLength":1},"path":{"type":"string"},"glob":{"type":"string"}},` +
			`"required":["pattern"],"additionalProperties":false}`),
		Func: func(ctx context.Context, c *engine.Call) (string, error) {
			var in struct{ Pattern, Path, Glob string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			re, err := regexp.Compile(in.Pattern)
			if err != nil {
				return "", fmt.Errorf("bad pattern: %v", err)
			}
			rel, err := w.rel(in.Path)
			if err != nil {
				return "", err
			}
			if in.Glob != "" {
				if _, err := path.Match(in.Glob, "x"); err != nil {
					return "", fmt.Errorf("bad glob %q: %v", in.Glob, err)
				}
			}
			fsys := w.root.FS()
			ign := newIgnorer(fsys)
			var out []string
			files := 0
			err = fs.WalkDir(fsys, rel, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil // unreadable: skip
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if d.IsDir() {
					if d.Name() == ".git" || (p != rel && ign.ignored(p, true)) {
						return fs.SkipDir
					}
					ign.load(p)
					return nil
				}
				if !d.Type().IsRegular() || ign.ignored(p, false) {
					return nil
				}
				if in.Glob != "" {
					if ok, _ := path.Match(in.Glob, d.Name()); !ok {
						return nil
					}
				}
				b, err := fs.ReadFile(fsys, p)
				if err != nil || isBinary(b) {
					return nil
				}
				files++
				if out = matchLines(out, p, b, re); len(out) >= maxMatches {
					return fs.SkipAll
				}
				return nil
			})
			if err != nil && err != fs.SkipAll {
				return "", w.explain(orDot(in.Path), err)
			}
			if len(out) == 0 {
				return fmt.Sprintf("no matches in %d files", files), nil
			}
			res := strings.Join(out, "\n")
			if len(out) >= maxMatches {
				res += fmt.Sprintf("\n[stopped at %d matches; narrow the pattern or the path]", maxMatches)
			}
			return res, nil
		},
	}
}

// ignorer applies .gitignore files: the rules of each folder's .gitignore
// hold below it; later rules win, and ! re-includes.
type ignorer struct {
	fsys  fs.FS
	rules []ignoreRule
}

type ignoreRule struct {
	base    string // the folder of the .gitignore
	pattern string
	negate  bool
	dirOnly bool
	rooted  bool // had a slash: matches the path from base, not any name
}

func newIgnorer(fsys fs.FS) *ignorer { return &ignorer{fsys: fsys} }

// load reads dir/.gitignore, if there is one.
func (ig *ignorer) load(dir string) {
	b, err := readRegularFS(ig.fsys, path.Join(dir, ".gitignore"), maxIgnoreFile)
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, " \r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{base: dir}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		if strings.Contains(line, "/") {
			r.rooted, line = true, strings.TrimPrefix(line, "/")
		}
		r.pattern = line
		ig.rules = append(ig.rules, r)
	}
}

func (ig *ignorer) ignored(p string, dir bool) bool {
	ignored := false
	for _, r := range ig.rules {
		if r.dirOnly && !dir {
			continue
		}
		rel := p
		if r.base != "." {
			if !strings.HasPrefix(p, r.base+"/") {
				continue
			}
			rel = strings.TrimPrefix(p, r.base+"/")
		}
		if r.matches(rel) {
			ignored = !r.negate
		}
	}
	return ignored
}

func (r ignoreRule) matches(rel string) bool {
	if r.rooted {
		return globMatch(r.pattern, rel)
	}
	return globMatch(r.pattern, path.Base(rel))
}

// globMatch is path.Match over folders, with ** matching any number of
// them.
func globMatch(pattern, name string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

// matchSegs matches name's segments against pat's. It fills a table of
// which suffixes of pat match which suffixes of name, one row per segment
// of the pattern: O(len(pat) × len(name)) segment matches, whatever the
// pattern (a recursive search is exponential in the number of **, and a
// workspace's .gitignore is anyone's).
func matchSegs(pat, name []string) bool {
	n := len(name)
	// next[j]: pat[i+1:] matches name[j:]; cur[j]: pat[i:] matches name[j:].
	next, cur := make([]bool, n+1), make([]bool, n+1)
	next[n] = true // the empty pattern matches the empty name
	for i := len(pat) - 1; i >= 0; i-- {
		if pat[i] == "**" {
			// Any number of segments, then the rest.
			any := false
			for j := n; j >= 0; j-- {
				any = any || next[j]
				cur[j] = any
			}
		} else {
			cur[n] = false
			for j := n - 1; j >= 0; j-- {
				cur[j] = false
				if next[j+1] {
					cur[j], _ = path.Match(pat[i], name[j])
				}
			}
		}
		next, cur = cur, next
	}
	return next[0]
}

// matchLines adds to out the lines of file p (content b) that re matches,
// as path:line: text, up to maxMatches in all.
func matchLines(out []string, p string, b []byte, re *regexp.Regexp) []string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan() && len(out) < maxMatches; n++ {
		if re.Match(sc.Bytes()) {
			line := engine.Clip(strings.TrimSpace(sc.Text()), 200)
			out = append(out, fmt.Sprintf("%s:%d: %s", p, n, line))
		}
	}
	return out
}
