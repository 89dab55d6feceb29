package commands

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// write writes files (path → text) under dir.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRealFiles: the published command files load, their names made from
// their folders, their fields read as Claude Code reads them.
func TestRealFiles(t *testing.T) {
	set := Load([]Place{
		{Dir: "testdata/real/claude-plugins-official", Source: "workspace", Trusted: true},
		{Dir: "testdata/real/wshobson-commands", Source: "user", Trusted: true},
	}, nil)
	if len(set.Errors) > 0 {
		t.Fatalf("errors: %v", set.Errors)
	}
	var names []string
	for _, c := range set.Commands {
		names = append(names, c.Name)
	}
	want := []string{"commit", "tools:issue", "tools:tdd-red", "workflows:git-workflow"}
	if !slices.Equal(names, want) {
		t.Fatalf("names = %v, want %v", names, want)
	}
	commit, _ := set.Find("commit")
	if !slices.Equal(commit.AllowedTools, []string{"Bash(git add:*)", "Bash(git status:*)", "Bash(git commit:*)"}) {
		t.Errorf("allowed-tools = %q", commit.AllowedTools)
	}
	if !strings.HasPrefix(commit.Description, "Create a git commit") || !strings.HasPrefix(commit.Body, "## Context") {
		t.Errorf("commit = %+v", commit)
	}
	x := commit.Expand("")
	if len(x.Notes) != 1 || !strings.Contains(x.Notes[0], "4 !`command` lines left as text, not run") {
		t.Errorf("notes = %q", x.Notes)
	}
	if !strings.Contains(x.Prompt, "!`git status`") {
		t.Errorf("the shell lines are not kept as text: %q", x.Prompt)
	}
	issue, _ := set.Find("tools:issue")
	if issue.Model != "claude-sonnet-4-0" || issue.Description != "Please analyze and fix the GitHub issue: $ARGUMENTS." {
		t.Errorf("issue = %+v", issue)
	}
	if got := issue.Expand("#42 urgently").Prompt; !strings.HasPrefix(got, "Please analyze and fix the GitHub issue: #42 urgently.\n") || strings.Contains(got, "ARGUMENTS:") {
		t.Errorf("expanded = %q", got[:80])
	}
}

// TestExpand: $ARGUMENTS, $1…$9 (quotes keep a word), a missing one
// empty, $$ kept, arguments appended to a body without placeholders, and
// @paths outside code listed to attach.
func TestExpand(t *testing.T) {
	for _, tc := range []struct{ body, args, want string }{
		{"Review $1 for $2.", `main.go "data races"`, "Review main.go for data races."},
		{"All: $ARGUMENTS; third: [$3]", "a b", "All: a b; third: []"},
		{"Cost $$5 of $1", "x", "Cost $$5 of x"},
		{"$10 is not $1 then 0", "a", "a0 is not a then 0"},
		{"Summarise the diff.", "briefly", "Summarise the diff.\n\nARGUMENTS: briefly"},
		{"Summarise the diff.", "", "Summarise the diff."},
	} {
		c := Command{Name: "t", Body: tc.body}
		if got := c.Expand(tc.args).Prompt; got != tc.want {
			t.Errorf("Expand(%q) of %q = %q, want %q", tc.args, tc.body, got, tc.want)
		}
	}
	c := Command{Name: "r", Body: "Look at @$1 and @docs/a.md, then `@not` this.\n```\n@decorator\n```\nAnd @docs/a.md again."}
	if got := c.Expand("main.go").Attach; !slices.Equal(got, []string{"main.go", "docs/a.md"}) {
		t.Errorf("attach = %q", got)
	}
	for _, tc := range []struct {
		line, name, args string
		ok               bool
	}{{"/review main.go", "review", "main.go", true}, {"/git:commit", "git:commit", "", true}, {"//review", "", "", false}, {"/", "", "", false}, {"review", "", "", false}} {
		name, args, ok := Split(tc.line)
		if name != tc.name || args != tc.args || ok != tc.ok {
			t.Errorf("Split(%q) = %q, %q, %v", tc.line, name, args, ok)
		}
	}
}

// TestPlaces: the workspace's commands win over the person's, a built-in
// name is noted and left out, Codex's prompts are read at the top level
// only (CODEX_HOME honoured), a front matter that does not parse is named
// with its line while the rest load.
func TestPlaces(t *testing.T) {
	ws, home, codex := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, ws, map[string]string{
		".claude/commands/review.md":     "---\ndescription: the workspace's review\nargument-hint: FILE\n---\nReview $1.",
		".claude/commands/git/commit.md": "Commit.",
		".claude/commands/model.md":      "Shadows /model.",
		".claude/commands/broken.md":     "---\ndescription: ok\nmodel: a: b\n---\nBody",
		".agentty/commands/fix.md":       "---\nfrobnicate: yes\n---\nFix $ARGUMENTS",
	})
	write(t, home, map[string]string{".claude/commands/review.md": "The person's review.", ".claude/commands/mine.md": "Mine."})
	write(t, codex, map[string]string{"prompts/draft.md": "---\ndescription: a Codex prompt\n---\nDraft $1", "prompts/sub/deep.md": "not read"})
	env := map[string]string{"HOME": home, "CODEX_HOME": codex, "AGENTTY_CONFIG": filepath.Join(home, "cfg", "config.json")}
	set := Load(Places(ws, ws, false, func(k string) string { return env[k] }), []string{"model", "compact"})
	var names []string
	for _, c := range set.Commands {
		names = append(names, c.Name+"@"+c.Source)
	}
	want := []string{"fix@workspace", "git:commit@workspace", "review@workspace", "mine@user", "draft@codex"}
	if !slices.Equal(names, want) {
		t.Errorf("commands = %v, want %v", names, want)
	}
	if len(set.Errors) != 1 || set.Errors[0].Line != 3 || !strings.HasSuffix(set.Errors[0].File, "broken.md") {
		t.Errorf("errors = %v, want broken.md's line 3", set.Errors)
	}
	notes := ""
	for _, n := range set.Notes {
		notes += n.String() + "\n"
	}
	for _, want := range []string{"model.md: /model is a built-in command of agentty's, which wins", "review.md: /review is also", "fix.md:2: frobnicate: ignored"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if r, _ := set.Find("review"); r.ArgumentHint != "FILE" || r.Trusted {
		t.Errorf("review = %+v", r)
	}
}

// TestHostileFiles: a symlink that leads out of the workspace, a file over
// the bound and a FIFO named *.md are refused, each named, and the rest
// load (the FIFO without waiting for a writer).
func TestHostileFiles(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	write(t, outside, map[string]string{"secret.md": "the person's secret"})
	write(t, ws, map[string]string{
		".claude/commands/good.md": "Good $1",
		".claude/commands/huge.md": strings.Repeat("x", MaxFile+1),
	})
	dir := filepath.Join(ws, ".claude", "commands")
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "escape.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := Load([]Place{{Dir: dir, Source: "workspace", Root: ws}}, nil)
	if len(set.Commands) != 1 || set.Commands[0].Name != "good" {
		t.Fatalf("commands = %+v, want good alone", set.Commands)
	}
	got := map[string]string{}
	for _, p := range set.Errors {
		got[filepath.Base(p.File)] = p.Message
	}
	for file, want := range map[string]string{"escape.md": "outside", "huge.md": "larger than", "pipe.md": "named pipe"} {
		if !strings.Contains(got[file], want) {
			t.Errorf("%s: %q, want it refused (%s)", file, got[file], want)
		}
	}
	if g, _ := set.Find("good"); g.Expand("next").Prompt != "Good next" {
		t.Errorf("the good command after the refusals: %q", g.Expand("next").Prompt)
	}
}
