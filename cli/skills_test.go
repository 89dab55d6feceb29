package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
)

// A skill folder is listed by agentty skills --json; in a run, the
// system prompt names it, the skill tool gives its body and
// read_skill_file its files, never a file outside its folder.
func TestSkills(t *testing.T) {
	ws := t.TempDir()
	env := agentEnv(t)
	dir := filepath.Join(ws, ".agentty", "skills", "release-notes")
	writeFile(t, filepath.Join(dir, "SKILL.md"), "---\nname: release-notes\ndescription: Write release notes from the git log.\nlicense: MIT\nallowed-tools: Bash(git log:*)\n---\n# Release notes\n\nGroup the changes by kind; BODY-MARKER.\n")
	writeFile(t, filepath.Join(dir, "references", "style.md"), "STYLE-MARKER: short lines.")
	writeFile(t, filepath.Join(ws, "secret.txt"), "SECRET-MARKER")
	writeFile(t, filepath.Join(ws, ".claude", "skills", "broken", "SKILL.md"), "---\nname: broken\n---\nno description\n")

	cwd, _ := os.Getwd()
	rel, err := filepath.Rel(cwd, ws) // a relative workspace, as "." is
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, context.Background(), env, "skills", "--json", "--workspace", rel)
	if code != 1 {
		t.Errorf("exit %d with a broken skill, want 1: %s", code, errs)
	}
	var got struct {
		Skills []struct {
			Name, Description, Scope string
			Files                    []string
		}
		Errors, Notes []struct{ File, Field, Message string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err, out)
	}
	if len(got.Skills) != 1 || got.Skills[0].Name != "release-notes" || got.Skills[0].Scope != "workspace" || strings.Join(got.Skills[0].Files, ",") != "references/style.md" {
		t.Errorf("skills %+v", got.Skills)
	}
	if len(got.Errors) != 1 || got.Errors[0].Field != "description" || len(got.Notes) != 1 || got.Notes[0].Field != "allowed-tools" {
		t.Errorf("errors %+v, notes %+v", got.Errors, got.Notes)
	}

	sc := writeScript(t, `{"turns":[{"tool_calls":[
		{"name":"skill","arguments":{"name":"release-notes"}},
		{"name":"read_skill_file","arguments":{"skill":"release-notes","path":"references/style.md"}},
		{"name":"read_skill_file","arguments":{"skill":"release-notes","path":"../../../secret.txt"}}]},
		{"answer":"done"}]}`)
	code, out, errs = runCLI(t, context.Background(), env, "run", "--json", "--workspace", ws, "--model", "script:"+sc, "write the release notes")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	results := map[string]*engine.ToolFinished{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev engine.Event
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		if d, ok := ev.Data.(*engine.ToolFinished); ok {
			results[d.ID] = d
		}
	}
	if len(results) != 3 {
		t.Fatalf("tool results %v", results)
	}
	var bodies []string
	for _, r := range results {
		bodies = append(bodies, string(r.Status)+": "+r.Result+r.Error)
	}
	all := strings.Join(bodies, "\n")
	if !strings.Contains(all, "BODY-MARKER") || !strings.Contains(all, "STYLE-MARKER") || strings.Contains(all, "SECRET-MARKER") || !strings.Contains(all, "error: ") {
		t.Errorf("the skill tools gave:\n%s", all)
	}
	st, err := app.Build(context.Background(), app.Options{Model: "offline", MaxSteps: 5, Workspace: ws}, nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if system := st.Engine.Config().System; !strings.Contains(system, "- release-notes: Write release notes from the git log.") {
		t.Errorf("the system prompt does not list the skill:\n%s", system)
	}
}
