package cli

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// pluginFolder is a plugin "kit" bringing a command (/kit:sum), an agent
// (helper), a skill (notes), a UserPromptSubmit hook that writes its
// CLAUDE_PLUGIN_ROOT into marker, and an MCP server (ev: server-everything
// started through a file under ${CLAUDE_PLUGIN_ROOT}).
func pluginFolder(t *testing.T, marker string) string {
	t.Helper()
	server := everythingServer(t)
	dir := filepath.Join(t.TempDir(), "kit")
	for p, text := range map[string]string{
		".claude-plugin/plugin.json": `{"name": "kit", "version": "0.3.0"}`,
		"commands/sum.md":            "---\ndescription: add two numbers\n---\nwhat is $1+$2?\n",
		"agents/helper.md":           "---\nname: helper\ndescription: the kit's helper\ntools: Read\n---\nYou help.\n",
		"skills/notes/SKILL.md":      "---\nname: notes\ndescription: how to take notes\n---\nTake notes.\n",
		"hooks/hooks.json":           `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/mark.sh\""}]}]}}`,
		"hooks/mark.sh":              "printf '%s' \"$CLAUDE_PLUGIN_ROOT\" > '" + marker + "'\n",
		"server/run.mjs":             "import " + jsString((&url.URL{Scheme: "file", Path: server}).String()) + ";\n",
		".mcp.json":                  `{"mcpServers": {"ev": {"command": "node", "args": ["${CLAUDE_PLUGIN_ROOT}/server/run.mjs", "stdio"]}}}`,
	} {
		p = filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }

// gitCommit makes dir a git repository with its files committed.
func gitCommit(t *testing.T, dir string) string {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "kit"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out, _ := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	return strings.TrimSpace(string(out))
}

// TestPluginAddBringsEverything: agentty plugin add of a folder, and of a
// local git repository (a file:// URL, pinned to its commit), brings the
// plugin's agents (agentty agents --json), skills, command (agentty run
// "/kit:sum 2 40" expands and the offline model answers 42), hook (run
// with CLAUDE_PLUGIN_ROOT, its marker written) and MCP server (agentty
// tools lists ev's tools); plugin rm takes them all away.
func TestPluginAddBringsEverything(t *testing.T) {
	for _, viaGit := range []bool{false, true} {
		t.Run(map[bool]string{false: "folder", true: "git"}[viaGit], func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "marker")
			src := pluginFolder(t, marker)
			commit := ""
			if viaGit {
				commit = gitCommit(t, src)
				src = "file://" + src
			}
			ws := t.TempDir()
			env := map[string]string{"AGENTTY_HOME": t.TempDir(), "HOME": t.TempDir()}
			ctx := context.Background()
			present(t, env, ws, false, marker) // nothing of it before it is added
			code, out, errs := runCLI(t, ctx, env, "plugin", "add", src)
			if code != 0 || !strings.Contains(out, "Added plugin kit 0.3.0") || !strings.Contains(out, "1 command, 1 agent, 1 skill, 1 hook, 1 MCP server") {
				t.Fatalf("plugin add: exit %d\n%s\n%s", code, out, errs)
			}
			if viaGit && !strings.Contains(out, "at commit "+commit[:12]) {
				t.Errorf("the commit is not shown: %s", out)
			}
			present(t, env, ws, true, marker)
			code, out, errs = runCLI(t, ctx, env, "plugin", "ls", "--json")
			var ls struct {
				Plugins []struct {
					Name, Commit string
					Brings       map[string][]string
				}
			}
			if json.Unmarshal([]byte(out), &ls); code != 0 || len(ls.Plugins) != 1 || ls.Plugins[0].Commit != commit ||
				strings.Join(ls.Plugins[0].Brings["commands"], ",") != "kit:sum" || strings.Join(ls.Plugins[0].Brings["mcp_servers"], ",") != "ev" {
				t.Errorf("plugin ls --json: exit %d %+v\n%s", code, ls, errs)
			}
			if code, out, errs = runCLI(t, ctx, env, "plugin", "rm", "kit"); code != 0 {
				t.Fatalf("plugin rm: exit %d %s %s", code, out, errs)
			}
			os.Remove(marker)
			present(t, env, ws, false, marker)
		})
	}
}

// present checks that the kit's agent, skill, command, hook and MCP
// server are all there (or all gone).
func present(t *testing.T, env map[string]string, ws string, want bool, marker string) {
	t.Helper()
	ctx := context.Background()
	_, out, _ := runCLI(t, ctx, env, "agents", "--json", "--workspace", ws)
	if got := strings.Contains(out, `"name": "helper"`) && strings.Contains(out, `"scope": "plugin kit"`); got != want {
		t.Errorf("agents --json lists the plugin's agent: %v, want %v\n%s", got, want, out)
	}
	_, out, _ = runCLI(t, ctx, env, "skills", "--json", "--workspace", ws)
	if got := strings.Contains(out, `"name": "notes"`); got != want {
		t.Errorf("skills --json lists the plugin's skill: %v, want %v\n%s", got, want, out)
	}
	_, out, _ = runCLI(t, ctx, env, "tools", "--workspace", ws)
	if got := strings.Contains(out, "ev__echo"); got != want {
		t.Errorf("tools lists the plugin's MCP server's: %v, want %v\n%s", got, want, out)
	}
	code, out, errs := runCLI(t, ctx, env, "run", "--model", "offline", "--workspace", ws, "/kit:sum 2 40")
	if got := code == 0 && strings.Contains(out, "42"); got != want {
		t.Errorf("/kit:sum 2 40 answered 42: %v, want %v (exit %d)\n%s\n%s", got, want, code, out, errs)
	}
	b, err := os.ReadFile(marker)
	root := filepath.Join(env["AGENTTY_HOME"], "plugins", "kit")
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	if got := err == nil && string(b) == root; got != want {
		t.Errorf("the plugin's hook ran with CLAUDE_PLUGIN_ROOT=%s: %v, want %v (%q, %v)", root, got, want, b, err)
	}
}

// TestPluginMarketplace: the official marketplace's subset
// (plugins/testdata/real) added lists its plugins; NAME@MARKETPLACE
// installs ralph-loop (its Stop hook listed by agentty hooks as the
// plugin's, run) and feature-dev (its agents listed by agentty agents);
// security-guidance's hooks with `if` and asyncRewake are listed as not
// run.
func TestPluginMarketplace(t *testing.T) {
	env := map[string]string{"AGENTTY_HOME": t.TempDir(), "HOME": t.TempDir()}
	ctx := context.Background()
	ws := t.TempDir()
	code, out, errs := runCLI(t, ctx, env, "plugin", "add", filepath.Join("..", "plugins", "testdata", "real"))
	if code != 0 || !strings.Contains(out, "Added marketplace claude-plugins-official") || !strings.Contains(out, "7 plugins") || !strings.Contains(out, "ralph-loop@claude-plugins-official") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, name := range []string{"ralph-loop", "feature-dev", "security-guidance"} {
		if code, out, errs = runCLI(t, ctx, env, "plugin", "add", name+"@claude-plugins-official"); code != 0 {
			t.Fatalf("%s: exit %d %s %s", name, code, out, errs)
		}
	}
	_, out, _ = runCLI(t, ctx, env, "plugin", "ls")
	wantIn(t, "plugin ls", out, "ralph-loop 1.0.0  from marketplace claude-plugins-official (./plugins/ralph-loop)", "brings 3 commands, 1 hook", "code-architect, code-explorer, code-reviewer", "marketplace claude-plugins-official")
	_, out, _ = runCLI(t, ctx, env, "plugin", "ls", "claude-plugins-official")
	wantIn(t, "plugin ls MARKETPLACE", out, "42crunch-api-security-testing@claude-plugins-official", "github@claude-plugins-official")
	_, out, errs = runCLI(t, ctx, env, "hooks", "--json", "--workspace", ws)
	var listed struct {
		Hooks []struct {
			Event, Command, Scope string
			Why                   string `json:"why_not"`
			Runs                  bool
		}
	}
	json.Unmarshal([]byte(out), &listed)
	ran, notRun := 0, 0
	for _, h := range listed.Hooks {
		switch {
		case h.Scope == "plugin ralph-loop" && h.Event == "Stop" && h.Runs && strings.Contains(h.Command, "${CLAUDE_PLUGIN_ROOT}/hooks/stop-hook.sh"):
			ran++
		case h.Scope == "plugin security-guidance" && !h.Runs && strings.Contains(h.Why, "asyncRewake"):
			notRun++
		}
	}
	if ran != 1 || notRun != 6 {
		t.Errorf("hooks: ralph-loop's Stop runs %d, security-guidance's with if not run %d (want 1, 6)\n%s\n%s", ran, notRun, out, errs)
	}
	_, out, _ = runCLI(t, ctx, env, "agents", "--json", "--workspace", ws)
	wantIn(t, "agents --json", out, `"name": "code-reviewer"`, `"scope": "plugin feature-dev"`)
}

// TestPluginCustomPaths: plugin.json's commands and agents naming single
// files load them (and not the default folders); the command is
// /PLUGIN:name.
func TestPluginCustomPaths(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "custom")
	for p, text := range map[string]string{
		".claude-plugin/plugin.json": `{"name": "custom", "commands": ["./one/solo.md"], "agents": "./people/a.md"}`,
		"one/solo.md":                "what is 6*7?\n",
		"commands/ignored.md":        "what is 1+1?\n",
		"people/a.md":                "---\nname: alpha\ndescription: the alpha agent\n---\nAlpha.\n",
		"agents/ignored.md":          "---\nname: ignored\ndescription: x\n---\nX.\n",
	} {
		p = filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
	}
	env := map[string]string{"AGENTTY_HOME": t.TempDir(), "HOME": t.TempDir()}
	ctx := context.Background()
	ws := t.TempDir()
	if code, out, errs := runCLI(t, ctx, env, "plugin", "add", dir); code != 0 || !strings.Contains(out, "1 command, 1 agent") {
		t.Fatalf("exit %d %s %s", code, out, errs)
	}
	code, out, errs := runCLI(t, ctx, env, "run", "--model", "offline", "--workspace", ws, "/custom:solo")
	if code != 0 || !strings.Contains(out, "42") {
		t.Errorf("/custom:solo: exit %d %q %s", code, out, errs)
	}
	_, out, _ = runCLI(t, ctx, env, "agents", "--json", "--workspace", ws)
	if !strings.Contains(out, `"name": "alpha"`) || strings.Contains(out, `"name": "ignored"`) {
		t.Errorf("agents --json:\n%s", out)
	}
	if _, out, _ = runCLI(t, ctx, env, "__complete", "plugin", "rm", ""); !strings.HasPrefix(out, "custom\n") {
		t.Errorf("plugin rm completes %q", out)
	}
}

// TestACPPluginCommand: a plugin's command is among the commands agentty
// acp advertises, as PLUGIN:name, and a prompt naming it runs its prompt.
func TestACPPluginCommand(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	dir := filepath.Join(t.TempDir(), "kit")
	os.MkdirAll(filepath.Join(dir, "commands"), 0o755)
	os.WriteFile(filepath.Join(dir, "commands", "mul.md"), []byte("---\ndescription: multiply\n---\nwhat is $1*$2?\n"), 0o644)
	if code, out, errs := runCLI(t, context.Background(), map[string]string{"AGENTTY_HOME": filepath.Join(home, "data")}, "plugin", "add", dir); code != 0 {
		t.Fatalf("exit %d %s %s", code, out, errs)
	}
	c := &acpClient{}
	conn := startACP(t, home, c, "--model", "offline")
	ctx := context.Background()
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: ws, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("/kit:mul 17 23")}})
	if err != nil || resp.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", resp, err)
	}
	c.mu.Lock()
	text, cmds := c.text.String(), slices.Clone(c.cmds)
	c.mu.Unlock()
	if !slices.Contains(cmds, "kit:mul") || !strings.Contains(text, "391") {
		t.Errorf("available commands %v; answer %q", cmds, text)
	}
}
