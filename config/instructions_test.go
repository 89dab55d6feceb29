package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
)

// instructionsEnv is an environment whose config folder (and so the user's
// AGENTS.md) is a temporary folder, returned too.
func instructionsEnv(t *testing.T) (map[string]string, string) {
	t.Helper()
	cfgDir := t.TempDir()
	return map[string]string{"AGENTTY_HOME": t.TempDir(), "AGENTTY_CONFIG": filepath.Join(cfgDir, "config.json"), "HOME": t.TempDir()}, cfgDir
}

// countingInstructions is the project's instructions with its reads
// counted by path.
func countingInstructions(t *testing.T, ws string, env map[string]string) (*Instructions, map[string]int) {
	t.Helper()
	p, err := NewInstructions(ws, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	reads := map[string]int{}
	p.read = func(path string, n int) ([]byte, bool, error) {
		reads[filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path)]++
		return ReadAtMost(path, n)
	}
	return p, reads
}

func TestInstructionsFound(t *testing.T) {
	tests := []struct {
		name        string
		ws          map[string]string // file → content
		user        string            // the user's AGENTS.md, "" for none
		wantSources []string
		wantText    []string // in this order
		notText     []string
	}{
		{"none", nil, "", nil, nil, nil},
		{"AGENTS.md", map[string]string{"AGENTS.md": "Use tabs."}, "", []string{"AGENTS.md"}, []string{"# Instructions from AGENTS.md\n\nUse tabs."}, nil},
		{"CLAUDE.md when there is no AGENTS.md", map[string]string{"CLAUDE.md": "Run go test."}, "", []string{"CLAUDE.md"}, []string{"# Instructions from CLAUDE.md", "Run go test."}, nil},
		{"AGENTS.md over CLAUDE.md", map[string]string{"AGENTS.md": "from agents", "CLAUDE.md": "from claude"}, "", []string{"AGENTS.md"}, []string{"from agents"}, []string{"from claude", "CLAUDE.md"}},
		{"the user's first, then the project's", map[string]string{"AGENTS.md": "project rule"}, "user rule", []string{"USER", "AGENTS.md"},
			[]string{"# Instructions from USER\n\nuser rule", "# Instructions from AGENTS.md\n\nproject rule"}, nil},
		{"the user's alone", nil, "user rule", []string{"USER"}, []string{"user rule"}, nil},
		{"an empty file gives nothing", map[string]string{"AGENTS.md": " \n\n"}, "", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, cfgDir := instructionsEnv(t)
			ws := t.TempDir()
			for f, body := range tt.ws {
				writeFile(t, filepath.Join(ws, f), body)
			}
			userPath := filepath.Join(cfgDir, "AGENTS.md")
			if tt.user != "" {
				writeFile(t, userPath, tt.user)
			}
			p, _ := countingInstructions(t, ws, env)
			in, problems := p.Load()
			if len(problems) > 0 {
				t.Errorf("problems: %q", problems)
			}
			want := slices.Clone(tt.wantSources)
			for i := range want {
				want[i] = strings.ReplaceAll(want[i], "USER", userPath)
			}
			if !slices.Equal(in.Sources, want) {
				t.Errorf("sources = %q, want %q", in.Sources, want)
			}
			at := 0
			for _, w := range tt.wantText {
				w = strings.ReplaceAll(w, "USER", userPath)
				i := strings.Index(in.Text[at:], w)
				if i < 0 {
					t.Fatalf("text lacks %q (after offset %d):\n%s", w, at, in.Text)
				}
				at += i + len(w)
			}
			for _, w := range tt.notText {
				if strings.Contains(in.Text, w) {
					t.Errorf("text has %q:\n%s", w, in.Text)
				}
			}
		})
	}
}

// The user's file is shown ~-shortened when it is under HOME; the
// workspace's relative to the workspace.
func TestInstructionsDisplayPaths(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	writeFile(t, filepath.Join(mkdir(t, home, ".config", "agentty"), "AGENTS.md"), "mine")
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "AGENTS.md"), "theirs")
	p, _ := countingInstructions(t, ws, env)
	in, _ := p.Load()
	if want := []string{"~/.config/agentty/AGENTS.md", "AGENTS.md"}; !slices.Equal(in.Sources, want) {
		t.Errorf("sources = %q, want %q", in.Sources, want)
	}

	// A workspace that is the config's folder: its AGENTS.md is read once.
	p, reads := countingInstructions(t, filepath.Join(home, ".config", "agentty"), env)
	in, _ = p.Load()
	if want := []string{"AGENTS.md"}; !slices.Equal(in.Sources, want) || reads["agentty/AGENTS.md"] != 1 {
		t.Errorf("workspace = config folder: sources %q, reads %v; want %q read once", in.Sources, reads, want)
	}
}

func mkdir(t *testing.T, parts ...string) string {
	t.Helper()
	d := filepath.Join(parts...)
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

// A file is read again when it changed (size, modification time), and not
// when it did not.
func TestInstructionsReadAgainOnlyWhenChanged(t *testing.T) {
	env, cfgDir := instructionsEnv(t)
	ws := t.TempDir()
	wsName := filepath.Base(ws)
	agents := filepath.Join(ws, "AGENTS.md")
	writeFile(t, agents, "first")
	writeFile(t, filepath.Join(cfgDir, "AGENTS.md"), "user")
	p, reads := countingInstructions(t, ws, env)
	load := func() string {
		t.Helper()
		in, problems := p.Load()
		if len(problems) > 0 {
			t.Fatalf("problems: %q", problems)
		}
		return in.Text
	}
	wsKey, userKey := wsName+"/AGENTS.md", filepath.Base(cfgDir)+"/AGENTS.md"

	if text := load(); !strings.Contains(text, "first") || reads[wsKey] != 1 || reads[userKey] != 1 {
		t.Fatalf("first load: reads %v, text %q", reads, text)
	}
	for range 3 {
		load()
	}
	if reads[wsKey] != 1 || reads[userKey] != 1 {
		t.Errorf("unchanged files were read again: %v", reads)
	}

	// Another size.
	writeFile(t, agents, "second, longer")
	if text := load(); !strings.Contains(text, "second, longer") || reads[wsKey] != 2 || reads[userKey] != 1 {
		t.Errorf("after a change of size: reads %v, text %q", reads, text)
	}
	// The same size, another modification time.
	writeFile(t, agents, "third, longer!")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(agents, later, later); err != nil {
		t.Fatal(err)
	}
	if text := load(); !strings.Contains(text, "third, longer!") || reads[wsKey] != 3 {
		t.Errorf("after a change of time: reads %v, text %q", reads, text)
	}
	load()
	if reads[wsKey] != 3 {
		t.Errorf("read again with nothing changed: %v", reads)
	}

	// AGENTS.md removed: CLAUDE.md now; AGENTS.md back: read afresh.
	writeFile(t, filepath.Join(ws, "CLAUDE.md"), "claude")
	os.Remove(agents)
	if text := load(); !strings.Contains(text, "claude") || strings.Contains(text, "third") {
		t.Errorf("AGENTS.md removed: text %q", text)
	}
	writeFile(t, agents, "back")
	if text := load(); !strings.Contains(text, "back") || strings.Contains(text, "claude") {
		t.Errorf("AGENTS.md back: text %q", text)
	}
}

// The engine's Config.Instructions is wired to the same reader: a run
// re-reads what changed.
// A file over 256 KiB is cut, on a rune boundary, and the model and the
// person are told.
func TestInstructionsSizeCap(t *testing.T) {
	env, _ := instructionsEnv(t)
	ws := t.TempDir()
	// "é" is two bytes: the cap falls in the middle of one.
	body := strings.Repeat("a", maxInstructions-1) + strings.Repeat("é", 100)
	writeFile(t, filepath.Join(ws, "AGENTS.md"), body)
	p, _ := countingInstructions(t, ws, env)
	in, problems := p.Load()
	if len(problems) != 1 || !strings.Contains(problems[0], "AGENTS.md is longer than 256 KiB") {
		t.Errorf("problems = %q, want one saying AGENTS.md was cut", problems)
	}
	if !strings.HasSuffix(in.Text, "a\n\n[AGENTS.md is longer than 256 KiB: the rest is cut off]") || strings.Contains(in.Text, "\uFFFD") {
		t.Errorf("text ends %q", in.Text[len(in.Text)-80:])
	}
	if len(in.Text) > maxInstructions+200 {
		t.Errorf("text is %d bytes", len(in.Text))
	}
}

// A FIFO named AGENTS.md neither hangs nor is read; CLAUDE.md does not
// stand in for it (there is an AGENTS.md).
func TestInstructionsFIFO(t *testing.T) {
	env, _ := instructionsEnv(t)
	ws := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(ws, "AGENTS.md"), 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	writeFile(t, filepath.Join(ws, "CLAUDE.md"), "claude")
	p, reads := countingInstructions(t, ws, env)
	type result struct {
		in       engine.Instructions
		problems []string
	}
	done := make(chan result, 1)
	go func() {
		in, problems := p.Load()
		done <- result{in, problems}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second): // a hang, not a timing check
		t.Fatal("Load hangs on a FIFO")
	}
	if r.in.Text != "" || len(r.in.Sources) != 0 || len(reads) != 0 {
		t.Errorf("instructions %+v, reads %v; want none", r.in, reads)
	}
	if len(r.problems) != 1 || !strings.Contains(r.problems[0], "AGENTS.md: not a regular file") {
		t.Errorf("problems = %q", r.problems)
	}
	// The read itself refuses a FIFO without hanging too (a file replaced
	// between the stat and the read).
	if _, _, err := ReadAtMost(filepath.Join(ws, "AGENTS.md"), 10); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("ReadAtMost(FIFO) = %v", err)
	}
}

// A workspace's AGENTS.md that is a symlink out of the workspace is
// refused; one that stays inside it is read; the user's own may lead
// anywhere.
func TestInstructionsSymlinks(t *testing.T) {
	env, cfgDir := instructionsEnv(t)
	outside := filepath.Join(t.TempDir(), "secret.md")
	writeFile(t, outside, "a secret from elsewhere")

	ws := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(cfgDir, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	p, _ := countingInstructions(t, ws, env)
	in, problems := p.Load()
	userPath := filepath.Join(cfgDir, "AGENTS.md")
	if !slices.Equal(in.Sources, []string{userPath}) || strings.Count(in.Text, "a secret from elsewhere") != 1 {
		t.Errorf("sources %q, text %q; want the user's symlink read, the workspace's refused", in.Sources, in.Text)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "AGENTS.md: leads to") || !strings.Contains(problems[0], "outside the workspace") {
		t.Errorf("problems = %q", problems)
	}

	inside := t.TempDir()
	writeFile(t, filepath.Join(inside, "docs.md"), "kept inside")
	if err := os.Symlink("docs.md", filepath.Join(inside, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	p, _ = countingInstructions(t, inside, map[string]string{"AGENTTY_CONFIG": filepath.Join(t.TempDir(), "config.json")})
	if in, problems := p.Load(); !strings.Contains(in.Text, "kept inside") || len(problems) > 0 {
		t.Errorf("a symlink inside the workspace: %+v, %q", in, problems)
	}
}

// agentty run with an AGENTS.md in an untrusted workspace: one stderr line
// names it, run_started lists it and model_request counts its tokens.

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// From a folder of a repository, the instructions are every level's from
// the root (the folder with .git) down, root first; the AGENTS.md files
// below are listed with their first headings; past their share of the
// budget they are cut, and said to be.
func TestInstructionsAtEveryLevel(t *testing.T) {
	repo := t.TempDir()
	os.Mkdir(filepath.Join(repo, ".git"), 0o755)
	ws := filepath.Join(repo, "internal", "cmd")
	os.MkdirAll(filepath.Join(ws, "stats", "deep"), 0o755)
	os.MkdirAll(filepath.Join(ws, "node_modules", "x"), 0o755)
	write := func(p, s string) { os.WriteFile(filepath.Join(repo, p), []byte(s), 0o644) }
	write("AGENTS.md", "# The repo\n\nUse tabs.")
	write("internal/CLAUDE.md", "Internal code.")
	write("internal/cmd/AGENTS.md", "Commands here.")
	write("internal/cmd/stats/deep/AGENTS.md", "intro\n\n## Deep stats rules\n")
	write("internal/cmd/node_modules/x/AGENTS.md", "# not ours")
	p, err := NewInstructions(ws, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	in, problems := p.Load()
	want := []string{"AGENTS.md", filepath.Join("internal", "CLAUDE.md"), filepath.Join("internal", "cmd", "AGENTS.md")}
	if !slices.Equal(in.Sources, want) || problems != nil {
		t.Fatalf("sources %v, problems %v; want %v", in.Sources, problems, want)
	}
	root, internal, cmd := strings.Index(in.Text, "Use tabs."), strings.Index(in.Text, "Internal code."), strings.Index(in.Text, "Commands here.")
	if root < 0 || !(root < internal && internal < cmd) {
		t.Errorf("not root first:\n%s", in.Text)
	}
	if !strings.Contains(in.Text, "- "+filepath.Join("stats", "deep", "AGENTS.md")+": Deep stats rules") || strings.Contains(in.Text, "not ours") {
		t.Errorf("the nested files are not listed as they should be:\n%s", in.Text)
	}
	write("AGENTS.md", "# The repo\n\n"+strings.Repeat("Use tabs. ", 2000))
	p.SetLimit(500, "25% of the 2000-token context budget")
	in, problems = p.Load()
	if n := engine.EstimateTokens(in.Text); n > 600 || !strings.Contains(in.Text, "[the project instructions are cut here") {
		t.Errorf("%d tokens after the cut:\n%.300s…", n, in.Text)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "more than their share (25% of the 2000-token context budget)") {
		t.Errorf("problems %v", problems)
	}
}

// With no AGENTS.md of agentty's own, the person's Codex (~/.codex/AGENTS.md)
// or Claude Code (~/.claude/CLAUDE.md) instructions are theirs.
func TestInstructionsOfOtherTools(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(home, ".claude", "CLAUDE.md"), []byte("Be brief."), 0o644)
	env := map[string]string{"HOME": home, "AGENTTY_CONFIG": filepath.Join(t.TempDir(), "config.json")}
	p, err := NewInstructions(ws, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	in, _ := p.Load()
	if !slices.Equal(in.Sources, []string{filepath.Join("~", ".claude", "CLAUDE.md")}) || !strings.Contains(in.Text, "Be brief.") {
		t.Errorf("sources %v, text %q", in.Sources, in.Text)
	}
}

// TestNestedInstructionsBreadthFirst: the folders below are looked at
// breadth first, so a shallow src/ is listed though 60 deeper doc/
// folders come first by name; a folder with only a CLAUDE.md is listed as
// its own runs read it; what is left out past 50 is counted.
func TestNestedInstructionsBreadthFirst(t *testing.T) {
	ws := t.TempDir()
	for i := range 60 {
		os.MkdirAll(filepath.Join(ws, "doc", fmt.Sprintf("part%02d", i)), 0o755)
		writeFile(t, filepath.Join(ws, "doc", fmt.Sprintf("part%02d", i), "AGENTS.md"), "# doc part\n")
	}
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	writeFile(t, filepath.Join(ws, "src", "CLAUDE.md"), "# The source\n")
	text := nestedInstructions(ws)
	if !strings.Contains(text, "- "+filepath.Join("src", "CLAUDE.md")+": The source") {
		t.Errorf("src's CLAUDE.md is not listed:\n%s", text)
	}
	if got := strings.Count(text, "\n- doc"); got != 49 || !strings.Contains(text, "… and 11 more deeper down") {
		t.Errorf("%d doc lines listed, or the rest not counted:\n%s", got, text)
	}
}
