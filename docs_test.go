package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)

// TestDocsLinksResolve: every relative link in README.md, ARCHITECTURE.md
// and docs/ names a file that exists, and a heading of it when it has an
// #anchor (as GitHub makes anchors of headings).
func TestDocsLinksResolve(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("docs", "*.md"))
	files = append(files, "README.md", "ARCHITECTURE.md")
	links := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range proseLines(string(b)) {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				path, anchor, _ := strings.Cut(target, "#")
				dest := f
				if path != "" {
					dest = filepath.Join(filepath.Dir(f), path)
				}
				text, err := os.ReadFile(dest)
				if err != nil {
					t.Errorf("%s:%d: %s: %v", f, i+1, target, err)
					continue
				}
				if anchor != "" && !hasAnchor(string(text), anchor) {
					t.Errorf("%s:%d: %s: %s has no heading #%s", f, i+1, target, dest, anchor)
				}
			}
		}
	}
	if links < 14 {
		t.Errorf("only %d relative links found: the README should link every page of docs/", links)
	}
}

// proseLines returns the lines of a Markdown text, those inside code
// fences blanked (their line numbers kept).
func proseLines(s string) []string {
	lines := strings.Split(s, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
		} else if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// hasAnchor reports whether a Markdown text has a heading whose GitHub
// anchor is anchor: lower case, spaces to -, punctuation but - and _ dropped.
func hasAnchor(text, anchor string) bool {
	for _, l := range proseLines(text) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		if b.String() == anchor {
			return true
		}
	}
	return false
}

// testName is a test or fuzz function's name in backquotes.
var testName = regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`")

// fixtureName is a hostile fixture's name, in italics.
var fixtureName = regexp.MustCompile(`\*([^*]+)\*`)

// TestThreatModelNamesRealTests: every test docs/threats.md cites is a
// test of the tree, and every fixture it names is a row of the hostile
// table, so the page cannot claim a proof that is not there.
func TestThreatModelNamesRealTests(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("docs", "threats.md"))
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, "_test.go") {
			b, _ := os.ReadFile(p)
			src.Write(b)
		}
		return nil
	})
	all := src.String()
	names := testName.FindAllStringSubmatch(string(doc), -1)
	for _, m := range names {
		if !strings.Contains(all, "func "+m[1]+"(") {
			t.Errorf("docs/threats.md cites %s, which is no test", m[1])
		}
	}
	var table []byte // the hostile table's rows, in cli/threats*_test.go
	files, _ := filepath.Glob(filepath.Join("cli", "threats*_test.go"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		table = append(table, b...)
	}
	fixtures := 0
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		for _, m := range fixtureName.FindAllStringSubmatch(line, -1) {
			fixtures++
			if name := strings.TrimSpace(strings.TrimSuffix(m[1], "…")); !strings.Contains(string(table), `name: "`+name) {
				t.Errorf("docs/threats.md names the fixture %q, which is no row of TestHostileFixtures", m[1])
			}
		}
	}
	if len(names) < 40 || fixtures < 10 {
		t.Errorf("docs/threats.md cites %d tests and %d fixtures: the table was not read", len(names), fixtures)
	}
}
