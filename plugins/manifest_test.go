package plugins

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestManifestPaths: custom paths as Claude Code reads them (commands and
// agents replace the default folder, skills add to it, hooks and
// mcpServers merge, files as well as folders); a path leading out of the
// plugin (.., an absolute path, a symbolic link) is refused and named,
// and the rest loads.
func TestManifestPaths(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "custom")
	writeTree(t, dir, map[string]string{
		ManifestPath: `{
  "name": "custom",
  "commands": ["./cmds/", "./one/solo.md", "../../etc"],
  "agents": ["./people/a.md", "/etc"],
  "skills": "./more-skills/one",
  "hooks": {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}},
  "mcpServers": "./servers.json",
  "lspServers": {"gopls": {"command": "gopls"}}
}`,
		"commands/ignored.md":             "Not read: commands replaces the folder.\n",
		"cmds/first.md":                   "First.\n",
		"one/solo.md":                     "Solo.\n",
		"people/a.md":                     "---\nname: a\ndescription: a\n---\nA.\n",
		"agents/ignored.md":               "---\nname: ignored\ndescription: x\n---\nX.\n",
		"skills/base/SKILL.md":            "---\nname: base\ndescription: b\n---\nB.\n",
		"more-skills/one/SKILL.md":        "---\nname: one\ndescription: o\n---\nO.\n",
		"hooks/hooks.json":                `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}}`,
		"servers.json":                    `{"http-one": {"type": "http", "url": "https://example.invalid/mcp"}, "broken": {"args": ["x"]}}`,
		".mcp.json":                       `{"mcpServers": {"local": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/server"}}}`,
		"escape-target-placeholder/.keep": "",
	})
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"x.md": "OUTSIDE\n"})
	home := t.TempDir()
	a, err := Open(home).Add(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	// A link out, made in the installed copy (as a later change there would).
	os.Symlink(outside, filepath.Join(Open(home).PluginDir("custom"), "linked"))
	os.WriteFile(filepath.Join(Open(home).PluginDir("custom"), ManifestPath), []byte(strings.Replace(mustRead(t, filepath.Join(dir, ManifestPath)), `"./people/a.md"`, `"./people/a.md", "./linked"`, 1)), 0o600)
	b := a.Brings
	if !slices.Equal(b.Commands, []string{"custom:first", "custom:solo"}) || !slices.Equal(b.Agents, []string{"a"}) ||
		!slices.Equal(b.Skills, []string{"base", "one"}) || !slices.Equal(b.Hooks, []string{"PreToolUse", "Stop"}) ||
		!slices.Equal(b.MCPServers, []string{"http-one", "local"}) {
		t.Errorf("brings %+v", b)
	}
	set := Load(home)
	notes := strings.Join(set.Notes, "\n")
	for _, want := range []string{`commands "../../etc" leads to`, `agents "/etc": a path in a plugin is relative`, `agents "./linked" leads to ` + outside, "MCP server broken: want a command or a url", "lspServers: agentty runs no language servers"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if len(set.Plugins) != 1 || len(set.Agents()) != 1 || len(set.Commands()) != 2 {
		t.Errorf("the rest did not load: %d plugins, %v, %v", len(set.Plugins), set.Agents(), set.Commands())
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestManifestThatDoesNotParse: added, it is refused naming its line and
// nothing is installed; installed and broken since, it is a note naming
// its line, and the other plugins load.
func TestManifestThatDoesNotParse(t *testing.T) {
	home := t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad")
	writeTree(t, bad, map[string]string{ManifestPath: "{\n  \"name\": \"bad\",\n  \"commands\": [\"./c\"\n}\n", "c/x.md": "X.\n"})
	_, err := Open(home).Add(context.Background(), bad, "")
	if err == nil || !strings.Contains(err.Error(), "plugin.json:4:") || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("add of a manifest that does not parse: %v", err)
	}
	if _, err := Open(home).Add(context.Background(), kit(t, "good"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(home).Add(context.Background(), kit(t, "broken"), ""); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(Open(home).PluginDir("broken"), ManifestPath), []byte("{\"name\": \"broken\",\n\"version\": 1.0.0}"), 0o600)
	set := Load(home)
	if len(set.Plugins) != 1 || set.Plugins[0].Name != "good" {
		t.Errorf("loaded %v", set.Plugins)
	}
	if notes := strings.Join(set.Notes, "\n"); !strings.Contains(notes, "plugin broken: ") || !strings.Contains(notes, "plugin.json:2:") {
		t.Errorf("notes: %s", notes)
	}
}
