package plugins

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// writeTree writes files (path → text) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
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

// kit is a plugin folder bringing one of each thing.
func kit(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	writeTree(t, dir, map[string]string{
		ManifestPath:                 `{"name": "` + name + `", "version": "1.2.0"}`,
		"commands/sum.md":            "---\ndescription: add two numbers\n---\nwhat is $1+$2?\n",
		"commands/git/log.md":        "Show the log.\n",
		"agents/helper.md":           "---\nname: helper\ndescription: helps\n---\nYou help.\n",
		"skills/notes/SKILL.md":      "---\nname: notes\ndescription: take notes\n---\nTake notes.\n",
		"hooks/hooks.json":           `{"description": "d", "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/mark.sh\""}]}]}}`,
		"hooks/mark.sh":              "echo marked\n",
		".mcp.json":                  `{"mcpServers": {"ev": {"command": "node", "args": ["${CLAUDE_PLUGIN_ROOT}/server.js", "stdio"]}}}`,
		"README.md":                  "a kit\n",
		"node_modules/.keep":         "",
		"scripts/deep/deeper/run.sh": "true\n",
	})
	return dir
}

func TestAddFolderBringsAndRemove(t *testing.T) {
	home := t.TempDir()
	st := Open(home)
	a, err := st.Add(context.Background(), kit(t, "kit"), "")
	if err != nil {
		t.Fatal(err)
	}
	if a.Plugin.Name != "kit" || a.Plugin.Version != "1.2.0" || a.Plugin.Commit != "" {
		t.Errorf("record %+v", a.Plugin)
	}
	b := a.Brings
	if !slices.Equal(b.Commands, []string{"kit:git:log", "kit:sum"}) || !slices.Equal(b.Agents, []string{"helper"}) ||
		!slices.Equal(b.Skills, []string{"notes"}) || !slices.Equal(b.Hooks, []string{"UserPromptSubmit"}) || !slices.Equal(b.MCPServers, []string{"ev"}) {
		t.Errorf("brings %+v", b)
	}
	set := Load(home)
	if len(set.Plugins) != 1 || len(set.Notes) > 0 {
		t.Fatalf("loaded %d plugins, notes %v", len(set.Plugins), set.Notes)
	}
	root := set.Plugins[0].Root
	srv := set.Plugins[0].MCP["ev"]
	if srv.Args[0] != root+"/server.js" || srv.Env[RootVar] != root {
		t.Errorf("the server's ${CLAUDE_PLUGIN_ROOT} is not the plugin's folder %s: %+v", root, srv)
	}
	if h := set.Hooks(); len(h) != 1 || h[0].Plugin != "kit" || h[0].Root != root || !strings.Contains(string(h[0].Raw), "UserPromptSubmit") {
		t.Errorf("hooks %+v", h)
	}
	if _, err := st.Add(context.Background(), kit(t, "kit"), ""); err == nil || !strings.Contains(err.Error(), "installed already") {
		t.Errorf("a second add of kit: %v", err)
	}
	if err := st.Remove("kit"); err != nil {
		t.Fatal(err)
	}
	if set := Load(home); len(set.Plugins) != 0 {
		t.Errorf("after rm: %d plugins", len(set.Plugins))
	}
	if _, err := os.Stat(st.PluginDir("kit")); !os.IsNotExist(err) {
		t.Errorf("the plugin's folder is still there: %v", err)
	}
	if err := st.Remove("kit"); err == nil {
		t.Error("removing it again did not fail")
	}
}

// gitRepo makes a git repository of dir's files, committed, and returns
// the commit.
func gitRepo(t *testing.T, dir, msg string) string {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", msg}} {
		if args[0] == "init" {
			if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
				continue
			}
		}
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func TestAddGitPinned(t *testing.T) {
	repo := kit(t, "gitkit")
	v1 := gitRepo(t, repo, "v1")
	exec.Command("git", "-C", repo, "tag", "v1").Run()
	writeTree(t, repo, map[string]string{"commands/later.md": "Later.\n"})
	v2 := gitRepo(t, repo, "v2")
	home := t.TempDir()
	st := Open(home)
	a, err := st.Add(context.Background(), "file://"+repo, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if a.Plugin.Commit != v1 || a.Plugin.Ref != "v1" || a.Plugin.Source != "file://"+repo {
		t.Errorf("record %+v, want commit %s", a.Plugin, v1)
	}
	if slices.Contains(a.Brings.Commands, "gitkit:later") {
		t.Errorf("--ref v1 brought v2's command: %v", a.Brings.Commands)
	}
	if _, err := os.Stat(filepath.Join(st.PluginDir("gitkit"), ".git")); !os.IsNotExist(err) {
		t.Errorf(".git was copied: %v", err)
	}
	st.Remove("gitkit")
	a, err = st.Add(context.Background(), "file://"+repo, "")
	if err != nil || a.Plugin.Commit != v2 || !slices.Contains(a.Brings.Commands, "gitkit:later") {
		t.Errorf("without --ref: %v, %+v, want commit %s", err, a, v2)
	}
	st.Remove("gitkit")
	// A branch other than the default (only origin/feature in the clone),
	// and a commit by its hash.
	exec.Command("git", "-C", repo, "checkout", "-q", "-b", "feature").Run()
	writeTree(t, repo, map[string]string{"commands/feat.md": "Feat.\n"})
	feat := gitRepo(t, repo, "feature")
	exec.Command("git", "-C", repo, "checkout", "-q", "main").Run()
	for ref, want := range map[string]string{"feature": feat, v1: v1} {
		a, err = st.Add(context.Background(), "file://"+repo, ref)
		if err != nil || a.Plugin.Commit != want {
			t.Errorf("--ref %s: %v %+v, want commit %s", ref, err, a, want)
		}
		st.Remove("gitkit")
	}
	if _, err := st.Add(context.Background(), "file://"+repo, "no-such-ref"); err == nil || !strings.Contains(err.Error(), "no such branch, tag or commit") {
		t.Errorf("a ref that is not there: %v", err)
	}
	if recs, _, _ := st.Installed(); len(recs) != 0 {
		t.Errorf("a failed add left %v", recs)
	}
}

func TestCopyBounds(t *testing.T) {
	home := t.TempDir()
	st := Store{Dir: filepath.Join(home, "plugins"), MaxFiles: 5}
	if _, err := st.Add(context.Background(), kit(t, "big"), ""); err == nil || !strings.Contains(err.Error(), "more than 5 files") {
		t.Errorf("past MaxFiles: %v", err)
	}
	st = Store{Dir: filepath.Join(home, "plugins"), MaxBytes: 300}
	if _, err := st.Add(context.Background(), kit(t, "big"), ""); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("past MaxBytes: %v", err)
	}
	entries, _ := os.ReadDir(st.Dir)
	for _, e := range entries {
		t.Errorf("a refused add left %s", e.Name())
	}
	if _, err := Open(home).Add(context.Background(), kit(t, "big"), ""); err != nil {
		t.Errorf("within the default bounds: %v", err)
	}
}

func TestCopyLinksAndFIFOs(t *testing.T) {
	home, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("SECRET"), 0o600)
	dir := kit(t, "linked")
	os.Symlink("../README.md", filepath.Join(dir, "commands", "readme.md")) // inside: copied as the file
	os.Symlink(filepath.Join(dir, "skills"), filepath.Join(dir, "skills-again"))
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := Open(home).Add(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(a.Notes, "\n")
	if !strings.Contains(notes, "pipe: not a regular file") || !strings.Contains(notes, "skills-again: a symbolic link to a folder") {
		t.Errorf("notes: %s", notes)
	}
	if fi, err := os.Lstat(filepath.Join(Open(home).PluginDir("linked"), "commands", "readme.md")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("a link inside was not copied as its file: %v %v", fi, err)
	}
	bad := kit(t, "leaky")
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(bad, "commands", "leak.md"))
	if _, err := Open(home).Add(context.Background(), bad, ""); err == nil || !strings.Contains(err.Error(), "outside the plugin's folder: refused") {
		t.Errorf("a link out: %v", err)
	}
	if _, err := os.Stat(Open(home).PluginDir("leaky")); !os.IsNotExist(err) {
		t.Errorf("the refused plugin was kept: %v", err)
	}
}

// TestConcurrentAdds: plugins added at once (two agentty plugin add in
// two terminals) are all recorded: installed.json is changed under a lock.
func TestConcurrentAdds(t *testing.T) {
	home := t.TempDir()
	var dirs []string
	for i := range 8 {
		dirs = append(dirs, kit(t, "kit"+string(rune('a'+i))))
	}
	errs := make(chan error, len(dirs))
	for _, d := range dirs {
		go func() {
			_, err := Open(home).Add(context.Background(), d, "")
			errs <- err
		}()
	}
	for range dirs {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if recs, _, _ := Open(home).Installed(); len(recs) != len(dirs) {
		t.Errorf("%d of %d adds recorded", len(recs), len(dirs))
	}
}
