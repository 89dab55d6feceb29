package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// plugin writes a plugin folder name (files: path → text, besides its
// manifest) in the fixture's workspace, where the rows' commands run.
func plugin(t *testing.T, f *fixture, name, manifest string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(f.ws, name)
	files[".claude-plugin/plugin.json"] = manifest
	for p, text := range files {
		p = filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// goodPlugin adds the plugin good, whose /good:calc asks what 6*7 is.
func goodPlugin(t *testing.T, f *fixture) {
	t.Helper()
	dir := plugin(t, f, "good", `{"name": "good"}`, map[string]string{"commands/calc.md": "what is 6*7?\n"})
	if r := f.run(t, "plugin", "add", dir); r.code != 0 {
		t.Fatalf("adding the good plugin: exit %d %s", r.code, r.stderr)
	}
}

// goodStillWorks checks that the good plugin's command still runs, and
// that the refused plugin (none: "") is not installed.
func goodStillWorks(t *testing.T, f *fixture, refused string) {
	t.Helper()
	r := f.run(t, "run", "--model", "offline", "/good:calc")
	if r.code != 0 || !strings.Contains(r.stdout, "42") {
		t.Errorf("the good plugin's command: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	if ls := f.run(t, "plugin", "ls"); refused != "" && strings.Contains(ls.stdout, refused+"  from") {
		t.Errorf("the refused plugin %s is installed:\n%s", refused, ls.stdout)
	}
}

// hostilePluginRows: plugins that try to lead out of their folder, or do
// not parse.
func hostilePluginRows() []hostile {
	return []hostile{{
		name: "a plugin manifest's path ../../etc",
		setup: func(t *testing.T, f *fixture) {
			goodPlugin(t, f)
			plugin(t, f, "bad", `{"name": "bad", "commands": "../../etc", "agents": ["../../../../../../etc/passwd"], "hooks": "../../../hooks.json"}`, map[string]string{"skills/ok/SKILL.md": "---\nname: ok\ndescription: ok\n---\nOK.\n"})
		},
		args: []string{"plugin", "add", "bad"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 0 {
				t.Errorf("exit %d: %s", r.code, r.stderr)
			}
			wantIn(t, "plugin add", r.stdout, `commands "../../etc" leads to`, `agents "../../../../../../etc/passwd" leads to /etc/passwd, out of the plugin's folder`, `hooks "../../../hooks.json" leads to`, "1 skill")
			goodStillWorks(t, f, "")
		},
	}, {
		name: "a symbolic link out of a plugin's folder",
		setup: func(t *testing.T, f *fixture) {
			goodPlugin(t, f)
			os.WriteFile(filepath.Join(f.outside, "secret.md"), []byte("SECRET-OUTSIDE"), 0o600)
			dir := plugin(t, f, "leaky", `{"name": "leaky"}`, map[string]string{"commands/ok.md": "OK.\n"})
			os.Symlink(filepath.Join(f.outside, "secret.md"), filepath.Join(dir, "commands", "leak.md"))
		},
		args: []string{"plugin", "add", "leaky"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 1 {
				t.Errorf("exit %d: %s", r.code, r.stdout)
			}
			wantIn(t, "stderr", r.stderr, "commands/leak.md: a symbolic link to", "outside the plugin's folder: refused")
			goodStillWorks(t, f, "leaky")
		},
	}, {
		name: "a marketplace source escaping it",
		setup: func(t *testing.T, f *fixture) {
			plugin(t, f, "loot", `{"name": "loot"}`, map[string]string{"commands/steal.md": "Steal.\n"})
			mk := filepath.Join(f.ws, "mk")
			os.MkdirAll(filepath.Join(mk, ".claude-plugin"), 0o700)
			os.WriteFile(filepath.Join(mk, ".claude-plugin", "marketplace.json"), []byte(`{"name": "mk", "plugins": [
  {"name": "loot", "source": "../loot"}, {"name": "good", "source": "./good"}]}`), 0o600)
			os.MkdirAll(filepath.Join(mk, "good", "commands"), 0o700)
			os.WriteFile(filepath.Join(mk, "good", "commands", "calc.md"), []byte("what is 6*7?\n"), 0o600)
			if r := f.run(t, "plugin", "add", mk); r.code != 0 || !strings.Contains(r.stdout, "loot@mk") {
				t.Fatalf("adding the marketplace: exit %d %s %s", r.code, r.stdout, r.stderr)
			}
		},
		args: []string{"plugin", "add", "loot@mk"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 1 {
				t.Errorf("exit %d: %s", r.code, r.stdout)
			}
			wantIn(t, "stderr", r.stderr, `source "../loot" leads out of the folder`)
			if g := f.run(t, "plugin", "add", "good@mk"); g.code != 0 {
				t.Errorf("the marketplace's good plugin: exit %d %s", g.code, g.stderr)
			}
			goodStillWorks(t, f, "loot")
		},
	}, {
		name: "a plugin manifest that does not parse",
		setup: func(t *testing.T, f *fixture) {
			goodPlugin(t, f)
			plugin(t, f, "broken", "{\n  \"name\": \"broken\",\n  \"version\": 1.0.0\n}\n", map[string]string{})
			// One installed, broken since.
			dir := plugin(t, f, "later", `{"name": "later"}`, map[string]string{"commands/x.md": "X.\n"})
			if r := f.run(t, "plugin", "add", dir); r.code != 0 {
				t.Fatal(r.stderr)
			}
			os.WriteFile(filepath.Join(f.home, "plugins", "later", ".claude-plugin", "plugin.json"), []byte("{\"name\":\n\n\"later\""), 0o600)
		},
		args: []string{"plugin", "add", "broken"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 1 {
				t.Errorf("exit %d: %s", r.code, r.stdout)
			}
			wantIn(t, "stderr", r.stderr, ".claude-plugin/plugin.json:3: ", "not installed")
			g := f.run(t, "run", "--model", "offline", "/good:calc")
			wantIn(t, "the run's notices", g.stderr, "plugin later: ", "plugin.json:3: ", "not loaded")
			goodStillWorks(t, f, "broken")
		},
	}, {
		name: "a FIFO in a plugin's folder",
		setup: func(t *testing.T, f *fixture) {
			goodPlugin(t, f)
			dir := plugin(t, f, "piped", `{"name": "piped"}`, map[string]string{"commands/ok.md": "OK.\n"})
			if err := syscall.Mkfifo(filepath.Join(dir, "commands", "pipe.md"), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		args: []string{"plugin", "add", "piped"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 0 {
				t.Errorf("exit %d: %s", r.code, r.stderr)
			}
			wantIn(t, "plugin add", r.stdout, "commands/pipe.md: not a regular file", "1 command")
			goodStillWorks(t, f, "")
		},
	}}
}
