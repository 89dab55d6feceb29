package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentty/agentty/engine"
)

// Project instructions are Markdown files the model is given with the
// system prompt: the user's AGENTS.md beside their config, then at each
// level from the repository's root (the nearest folder above the
// workspace with .git, else the workspace) down to the workspace, root
// first, that level's AGENTS.md (or CLAUDE.md when there is no AGENTS.md),
// as Codex and Claude Code read them. The AGENTS.md files below the
// workspace are listed (path and first heading), for the model to read when
// it works there. They are text, not settings: they load in an untrusted
// workspace too (they cannot start a process or reach a host), and agentty
// says which it gives. Together they may take a share of the context budget
// (SetLimit); past it they are cut, and said to be.

// maxInstructions bounds one instructions file; the rest of a longer one is
// cut off, and the model and the person are told so.
const maxInstructions = 256 << 10

// instructionFile is a file instructions may come from.
type instructionFile struct {
	path string // to open
	show string // as shown: relative to the workspace, or ~-shortened
	// root, for a workspace's file, is the workspace (absolute, symlinks
	// resolved): the file must not lead out of it.
	root string
}

// Instructions reads the instructions files, again only when one
// changed (its size, modification time or identity). It is safe for
// concurrent use.
type Instructions struct {
	// users are the person's own files: agentty's AGENTS.md beside the
	// config, else Codex's ~/.codex/AGENTS.md, else Claude Code's
	// ~/.claude/CLAUDE.md; the first that exists is read.
	users []instructionFile
	// levels are, root first, each level's AGENTS.md then CLAUDE.md: of
	// each, the first that exists is read.
	levels [][]instructionFile
	// nested lists the AGENTS.md files below the workspace, with their
	// first headings (found once, at the start).
	nested string
	// limit is the most tokens they may take together (0: no limit), and
	// why, for the notice.
	limit    int
	limitWhy string
	// read reads a file: its first n bytes, and whether there was more
	// (ReadAtMost; a seam for tests).
	read func(path string, n int) ([]byte, bool, error)

	mu    sync.Mutex
	cache map[string]readInstructions // by path; guarded by mu
}

// readInstructions is one file as last read.
type readInstructions struct {
	fi      fs.FileInfo
	text    string // "" when the file failed to read or is empty
	problem string
}

// NewInstructions finds the instructions files of the workspace
// wsDir and of the user: AGENTS.md beside the user's config file
// ($AGENTTY_CONFIG's folder, else $XDG_CONFIG_HOME/agentty, else
// ~/.config/agentty).
func NewInstructions(wsDir string, getenv func(string) string) (*Instructions, error) {
	root, err := filepath.Abs(wsDir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", wsDir, err)
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	p := &Instructions{read: ReadAtMost}
	userPaths := []string{filepath.Join(filepath.Dir(Path(getenv)), "AGENTS.md")}
	if home := getenv("HOME"); home != "" {
		userPaths = append(userPaths, filepath.Join(home, ".codex", "AGENTS.md"), filepath.Join(home, ".claude", "CLAUDE.md"))
	}
	for _, up := range userPaths {
		p.users = append(p.users, instructionFile{path: up, show: homeShort(up, getenv("HOME"))})
	}
	top := repoRoot(root)
	for _, dir := range levels(top, root) {
		rel, _ := filepath.Rel(top, dir)
		var level []instructionFile
		for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
			show := filepath.Join(rel, name)
			level = append(level, instructionFile{path: filepath.Join(dir, name), show: show, root: top})
		}
		p.levels = append(p.levels, level)
	}
	p.nested = nestedInstructions(root)
	return p, nil
}

// SetLimit caps the instructions at tokens (0: no cap); why says what the
// cap is, for the notice ("25% of the 64000-token context budget").
func (p *Instructions) SetLimit(tokens int, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.limit, p.limitWhy = tokens, why
}

// repoRoot is the nearest folder from dir up with a .git, else dir.
func repoRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return dir
		}
		d = up
	}
}

// levels are the folders from top down to dir, both included (dir is top
// or below it).
func levels(top, dir string) []string {
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		out = append([]string{d}, out...)
		if d == top || filepath.Dir(d) == d {
			return out
		}
	}
}

// homeShort writes path under home as ~/…; others as they are.
func homeShort(path, home string) string {
	if home == "" || !filepath.IsAbs(path) {
		return path
	}
	if rel, err := filepath.Rel(filepath.Clean(home), path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != "." {
		return "~" + string(filepath.Separator) + rel
	}
	return path
}

// Load returns the instructions to give the model (the user's first, then
// the project's, each under a heading naming its file) and the problems
// found: a file that could not be read (it is left out) or was cut.
func (p *Instructions) Load() (engine.Instructions, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var files []instructionFile
	user := p.users[0]
	for _, u := range p.users {
		if present(u.path) {
			user = u
			break
		}
	}
	userRead := present(user.path)
	for _, level := range p.levels {
		for _, f := range level {
			if present(f.path) {
				files = append(files, f) // CLAUDE.md only when there is no AGENTS.md
				// The user's is read once, as the workspace's, when a
				// level is the config's folder.
				userRead = userRead && !sameFile(filepath.Dir(user.path), filepath.Dir(f.path))
				break
			}
		}
	}
	if userRead {
		files = append([]instructionFile{user}, files...)
	}
	var in engine.Instructions
	var parts, problems []string
	seen := map[string]bool{}
	for _, f := range files {
		r := p.file(f)
		seen[f.path] = true
		if r.problem != "" {
			problems = append(problems, r.problem)
		}
		if r.text == "" {
			continue
		}
		in.Sources = append(in.Sources, f.show)
		parts = append(parts, "# Instructions from "+f.show+"\n\n"+r.text)
	}
	for path := range p.cache {
		if !seen[path] {
			delete(p.cache, path) // a file no longer used is read afresh if it comes back
		}
	}
	if p.nested != "" {
		parts = append(parts, p.nested)
	}
	in.Text = strings.Join(parts, "\n\n")
	if p.limit > 0 && engine.EstimateTokens(in.Text) > p.limit {
		n := engine.EstimateTokens(in.Text)
		in.Text = in.Text[:runeStart([]byte(in.Text[:p.limit*4]))] +
			fmt.Sprintf("\n\n[the project instructions are cut here: they are ~%d tokens, more than their share, %s]", n, p.limitWhy)
		problems = append(problems, fmt.Sprintf("the project instructions are ~%d tokens, more than their share (%s): only the first ~%d are given to the model", n, p.limitWhy, p.limit))
	}
	return in, problems
}

// file reads f unless it is unchanged since it was last read. p.mu is held.
func (p *Instructions) file(f instructionFile) readInstructions {
	fail := func(format string, a ...any) readInstructions {
		return readInstructions{problem: f.show + ": " + fmt.Sprintf(format, a...) + "; it is not given to the model"}
	}
	path := f.path
	if f.root != "" {
		// Someone else's folder: a symlink must not lead out of it (and
		// what is read is where it led).
		real, err := filepath.Abs(f.path)
		if err == nil {
			real, err = filepath.EvalSymlinks(real)
		}
		if err != nil {
			return fail("a symlink that cannot be followed: %v", err)
		}
		if rel, err := filepath.Rel(f.root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fail("leads to %s, outside the workspace; refusing to read it", real)
		}
		path = real
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fail("%v", err)
	}
	if !fi.Mode().IsRegular() {
		return fail("not a regular file")
	}
	if old, ok := p.cache[f.path]; ok && unchanged(old.fi, fi) {
		return old
	}
	r := readInstructions{fi: fi}
	b, more, err := p.read(path, maxInstructions)
	if err != nil {
		r = fail("%v", err)
		r.fi = fi
	} else {
		r.text = strings.TrimSpace(strings.ToValidUTF8(string(b[:runeStart(b)]), "\uFFFD"))
		if more && r.text != "" {
			r.text += fmt.Sprintf("\n\n[%s is longer than %d KiB: the rest is cut off]", f.show, maxInstructions>>10)
			r.problem = fmt.Sprintf("%s is longer than %d KiB: only its first %d KiB are given to the model", f.show, maxInstructions>>10, maxInstructions>>10)
		}
	}
	if p.cache == nil {
		p.cache = map[string]readInstructions{}
	}
	p.cache[f.path] = r
	return r
}

// runeStart is where the trailing incomplete UTF-8 sequence of b begins, if
// b was cut in the middle of one; len(b) otherwise.
func runeStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// unchanged reports whether b is the file a was, as it was.
func unchanged(a, b fs.FileInfo) bool {
	return a != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// InstructionsNotice names the instructions given to the model, for the
// person; "" when there are none.
func InstructionsNotice(in engine.Instructions) string {
	if len(in.Sources) == 0 {
		return ""
	}
	return "project instructions given to the model: " + strings.Join(in.Sources, ", ")
}

// present reports whether there is something at path (a file that cannot
// be read is present: Load says why it is not used).
func present(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// nestedInstructions lists the instruction files in the folders below dir
// (not dir's own), each with its first heading, for the model: a folder's
// AGENTS.md, or its CLAUDE.md when it has none, as the chain reads them.
// Folders are looked at breadth first (the shallow ones are the ones that
// matter for most of the workspace), at most maxNestedFolders of them,
// skipping hidden folders and those of dependencies and builds; at most
// maxNestedListed are listed, and the list says how many it left out. ""
// when there are none.
func nestedInstructions(dir string) string {
	var lines []string
	found, looked := 0, 0
	queue := []string{dir}
	for len(queue) > 0 && looked < maxNestedFolders {
		p := queue[0]
		queue = queue[1:]
		looked++
		entries, err := os.ReadDir(p)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if name := e.Name(); e.IsDir() && !skippedFolder(name) {
				queue = append(queue, filepath.Join(p, name))
			}
		}
		if p == dir {
			continue
		}
		f := folderInstructions(p)
		if f == "" {
			continue
		}
		if found++; len(lines) < maxNestedListed {
			rel, _ := filepath.Rel(dir, f)
			line := "- " + rel
			if h := firstHeading(f); h != "" {
				line += ": " + h
			}
			lines = append(lines, line)
		}
	}
	if found == 0 {
		return ""
	}
	out := "# Instructions in the folders below\n\nThese folders have instructions of their own; read them before you work there:\n" + strings.Join(lines, "\n")
	if left := found - len(lines); left > 0 {
		out += fmt.Sprintf("\n- … and %d more deeper down, not listed (list_dir and read_file find them)", left)
	}
	if len(queue) > 0 {
		out += fmt.Sprintf("\n(Only the first %d folders were looked at; deeper folders may have instructions too.)", maxNestedFolders)
	}
	return out
}

// The bounds of nestedInstructions.
const (
	maxNestedFolders = 4000
	maxNestedListed  = 50
)

// skippedFolder reports whether nestedInstructions leaves a folder out:
// hidden ones, and those of dependencies and builds.
func skippedFolder(name string) bool {
	return strings.HasPrefix(name, ".") || slices.Contains([]string{"node_modules", "vendor", "target", "dist", "build"}, name)
}

// folderInstructions is a folder's instruction file: its AGENTS.md, else
// its CLAUDE.md ("" for neither, or one that is not a regular file).
func folderInstructions(dir string) string {
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		f := filepath.Join(dir, name)
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
			return f
		}
	}
	return ""
}

// firstHeading is the first Markdown heading in the file's first 4 KiB,
// without its #s; "" when there is none.
func firstHeading(path string) string {
	b, _, err := ReadAtMost(path, 4<<10)
	if err != nil {
		return ""
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if h, ok := strings.CutPrefix(strings.TrimSpace(l), "#"); ok {
			return engine.OneLine(strings.TrimSpace(strings.TrimLeft(h, "#")), 80)
		}
	}
	return ""
}
