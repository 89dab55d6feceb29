package plugins

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRealMarketplace: the official marketplace's subset in
// testdata/real (ORIGIN.md) is added as a marketplace, lists its seven
// plugins, and its five plugins with a path source install with what
// they bring; security-guidance's hooks with `if` and asyncRewake load
// (package hooks lists them as not run).
func TestRealMarketplace(t *testing.T) {
	home := t.TempDir()
	st := Open(home)
	a, err := st.Add(context.Background(), "testdata/real", "")
	if err != nil {
		t.Fatal(err)
	}
	if a.Market == nil || a.Market.Name != "claude-plugins-official" || len(a.Listed) != 7 {
		t.Fatalf("added %+v, listed %d", a.Market, len(a.Listed))
	}
	want := map[string]func(Brings) bool{
		"commit-commands": func(b Brings) bool {
			return slices.Equal(b.Commands, []string{"commit-commands:clean_gone", "commit-commands:commit-push-pr", "commit-commands:commit"})
		},
		"feature-dev": func(b Brings) bool {
			return len(b.Commands) == 1 && slices.Equal(b.Agents, []string{"code-architect", "code-explorer", "code-reviewer"})
		},
		"ralph-loop":        func(b Brings) bool { return len(b.Commands) == 3 && slices.Equal(b.Hooks, []string{"Stop"}) },
		"security-guidance": func(b Brings) bool { return len(b.Hooks) == 9 },
		"github":            func(b Brings) bool { return slices.Equal(b.MCPServers, []string{"github"}) },
	}
	for name, ok := range want {
		a, err := st.Add(context.Background(), name+"@claude-plugins-official", "")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !ok(a.Brings) || a.Plugin.Marketplace != "claude-plugins-official" {
			t.Errorf("%s brings %+v (%+v)", name, a.Brings, a.Plugin)
		}
	}
	set := Load(home)
	if len(set.Plugins) != 5 || len(set.Notes) != 0 {
		t.Errorf("loaded %d, notes %v", len(set.Plugins), set.Notes)
	}
	if _, err := st.Add(context.Background(), "nosuch@claude-plugins-official", ""); err == nil || !strings.Contains(err.Error(), "lists no plugin") {
		t.Errorf("a plugin the marketplace lacks: %v", err)
	}
}

// TestMarketSources: a path source that leads out of the marketplace is
// refused and the next good one installs; a url source (a local
// repository) is cloned at its sha; a pluginRoot joins bare paths.
func TestMarketSources(t *testing.T) {
	outer := t.TempDir()
	writeTree(t, outer, map[string]string{"loot/" + ManifestPath: `{"name": "loot"}`, "loot/commands/steal.md": "Steal.\n"})
	repo := kit(t, "remote")
	sha := gitRepo(t, repo, "one")
	writeTree(t, repo, map[string]string{"commands/newer.md": "Newer.\n"})
	gitRepo(t, repo, "two")
	mk := filepath.Join(outer, "mk")
	writeTree(t, mk, map[string]string{
		MarketPath: `{"name": "mk", "metadata": {"pluginRoot": "./plugins"}, "plugins": [
  {"name": "escape", "source": "../loot"},
  {"name": "escape2", "source": "./plugins/../../loot"},
  {"name": "bare", "source": "bare"},
  {"name": "remote", "source": {"source": "url", "url": "file://` + repo + `", "sha": "` + sha + `"}},
  {"name": "npm", "source": {"source": "npm", "package": "x"}}
]}`,
		"plugins/bare/commands/hi.md": "Hi.\n",
	})
	home := t.TempDir()
	st := Open(home)
	if _, err := st.Add(context.Background(), mk, ""); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"escape", "escape2"} {
		if _, err := st.Add(context.Background(), name+"@mk", ""); err == nil || !strings.Contains(err.Error(), "leads out of the folder") {
			t.Errorf("%s: %v", name, err)
		}
	}
	a, err := st.Add(context.Background(), "bare@mk", "")
	if err != nil || !slices.Equal(a.Brings.Commands, []string{"bare:hi"}) {
		t.Errorf("bare: %v %+v", err, a)
	}
	a, err = st.Add(context.Background(), "remote@mk", "")
	if err != nil || a.Plugin.Commit != sha || slices.Contains(a.Brings.Commands, "remote:newer") {
		t.Errorf("remote: %v %+v", err, a)
	}
	if _, err := st.Add(context.Background(), "npm@mk", ""); err == nil || !strings.Contains(err.Error(), `"npm"`) {
		t.Errorf("npm: %v", err)
	}
	if recs, _, _ := st.Installed(); len(recs) != 2 {
		t.Errorf("installed %v", recs)
	}
	if err := st.Remove("mk"); err != nil {
		t.Errorf("removing the marketplace: %v", err)
	}
	if _, err := st.Add(context.Background(), "bare@mk", ""); err == nil || !strings.Contains(err.Error(), "no marketplace") {
		t.Errorf("after the marketplace is removed: %v", err)
	}
}

// TestMarketFromGit: a marketplace in a git repository (a file:// URL)
// is kept with the commit it was cloned at, and its plugins install from
// the kept copy.
func TestMarketFromGit(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "mk")
	if err := copyDir(t, "testdata/real", repo); err != nil {
		t.Fatal(err)
	}
	sha := gitRepo(t, repo, "marketplace")
	st := Open(t.TempDir())
	a, err := st.Add(context.Background(), "file://"+repo, "")
	if err != nil || a.Market == nil || a.Market.Commit != sha {
		t.Fatalf("%v %+v, want commit %s", err, a, sha)
	}
	if a, err := st.Add(context.Background(), "commit-commands@claude-plugins-official", ""); err != nil || len(a.Brings.Commands) != 3 {
		t.Errorf("%v %+v", err, a)
	}
	// Added again, it is refreshed: one marketplace, at the new commit.
	writeTree(t, repo, map[string]string{"NEWS.md": "news\n"})
	sha2 := gitRepo(t, repo, "news")
	if a, err := st.Add(context.Background(), "file://"+repo, ""); err != nil || a.Market.Commit != sha2 {
		t.Errorf("added again: %v %+v", err, a)
	}
	if _, ms, _ := st.Installed(); len(ms) != 1 || ms[0].Source != "file://"+repo || ms[0].Commit != sha2 {
		t.Errorf("marketplaces %+v", ms)
	}
}

// copyDir copies the folder src to dst (a test's fixture).
func copyDir(t *testing.T, src, dst string) error {
	t.Helper()
	_, err := copyTree(src, dst, bounds{bytes: MaxBytes, files: MaxFiles})
	return err
}
