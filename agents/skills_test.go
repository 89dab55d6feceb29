package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
)

func skillFile(name string) string {
	return "---\nname: " + name + "\ndescription: the " + name + " skill\n---\nthe body of " + name + "\n"
}

func noEnv(string) string { return "" }

// callSkillTool calls the tool name of ss with args, and waits for it at
// most 20 s (a read that waits on a FIFO fails the test, not hangs it).
func callSkillTool(t *testing.T, ss *Skills, name, args string) (string, error) {
	t.Helper()
	for _, tool := range ss.Tools() {
		if tool.Name != name {
			continue
		}
		type result struct {
			out string
			err error
		}
		done := make(chan result, 1)
		go func() {
			out, err := tool.Func(context.Background(), &engine.Call{Args: json.RawMessage(args)})
			done <- result{out, err}
		}()
		select {
		case r := <-done:
			return r.out, r.err
		case <-time.After(20 * time.Second):
			t.Fatalf("%s %s is still waiting", name, args)
		}
	}
	t.Fatalf("no tool %s", name)
	return "", nil
}

// TestSkillSymlinkOutOfWorkspace: a SKILL.md that is a symlink to a file
// outside the workspace (its folder inside) is refused with a problem
// saying so: not listed, not readable with skill. The next skill of the
// folder still loads.
func TestSkillSymlinkOutOfWorkspace(t *testing.T) {
	ws := t.TempDir()
	outside := writeAgent(t, t.TempDir(), "SKILL.md", "---\nname: b\ndescription: OUTSIDE-DESCRIPTION\n---\nOUTSIDE-BODY\n")
	dir := filepath.Join(ws, ".claude", "skills")
	if err := os.MkdirAll(filepath.Join(dir, "b"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "b", "SKILL.md")); err != nil {
		t.Skip(err)
	}
	writeAgent(t, filepath.Join(dir, "c"), "SKILL.md", skillFile("c"))

	got := LoadSkills(SkillPlaces(ws, realPath(t, ws), false, noEnv))
	if len(got.Skills) != 1 || got.Skills[0].Name != "c" {
		t.Errorf("skills %+v, want c alone", got.Skills)
	}
	if errs := problems(got.Errors); !strings.Contains(errs, filepath.Join("b", "SKILL.md")) || !strings.Contains(errs, "leads to "+outside) || !strings.Contains(errs, "refusing to read it") {
		t.Errorf("errors %q, want b's SKILL.md refused as leading outside", errs)
	}
	if p := got.Prompt(); strings.Contains(p, "OUTSIDE") || !strings.Contains(p, "- c: the c skill") {
		t.Errorf("the prompt:\n%s", p)
	}
	out, err := callSkillTool(t, &got, "skill", `{"name":"b"}`)
	if err == nil || strings.Contains(out+err.Error(), "OUTSIDE") {
		t.Errorf("skill b = %q, %v; want no such skill", out, err)
	}
	if out, err := callSkillTool(t, &got, "skill", `{"name":"c"}`); err != nil || !strings.Contains(out, "the body of c") {
		t.Errorf("skill c = %q, %v", out, err)
	}
}

// TestReadSkillFileFIFO: read_skill_file on a FIFO of the skill's folder
// is refused at once, in the words of read_file; a file beside it reads.
func TestReadSkillFileFIFO(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".agentty", "skills", "c")
	writeAgent(t, dir, "SKILL.md", skillFile("c"))
	writeAgent(t, dir, "notes.md", "NOTES")
	if err := syscall.Mkfifo(filepath.Join(dir, "data.fifo"), 0o600); err != nil {
		t.Skip(err)
	}
	got := LoadSkills(SkillPlaces(ws, realPath(t, ws), false, noEnv))
	if len(got.Skills) != 1 {
		t.Fatalf("skills %+v, errors %v", got.Skills, got.Errors)
	}
	out, err := callSkillTool(t, &got, "read_skill_file", `{"skill":"c","path":"data.fifo"}`)
	if err == nil || err.Error() != "refused: data.fifo is a named pipe (FIFO), not a regular file" {
		t.Errorf("read_skill_file data.fifo = %q, %v; want it refused", out, err)
	}
	if out, err := callSkillTool(t, &got, "read_skill_file", `{"skill":"c","path":"notes.md"}`); err != nil || out != "NOTES" {
		t.Errorf("read_skill_file notes.md = %q, %v", out, err)
	}
}

// TestSkillsListBounded: 2,000 skills in a workspace's folder (about
// 600 KB of descriptions) do not make a system prompt of that size: the
// list stays within its budget, and a note says how many were left out
// and why. Those left out are not offered by the skill tool either.
func TestSkillsListBounded(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".agents", "skills")
	const total = 2000
	for i := range total {
		name := fmt.Sprintf("skill-%04d", i)
		writeAgent(t, filepath.Join(dir, name), "SKILL.md", "---\nname: "+name+"\ndescription: "+strings.Repeat("word ", 60)+"\n---\nbody\n")
	}
	got := LoadSkills(SkillPlaces(ws, realPath(t, ws), false, noEnv))
	p := got.Prompt()
	if n := engine.EstimateTokens(p); n > skillsBudget {
		t.Errorf("the skills list is ~%d tokens (%d bytes), over its budget of %d", n, len(p), skillsBudget)
	}
	listed := len(got.Skills)
	if listed == 0 || listed >= total || strings.Count(p, "\n- ") != listed {
		t.Fatalf("%d skills kept, %d listed in the prompt; want some, not all %d", listed, strings.Count(p, "\n- "), total)
	}
	want := fmt.Sprintf("%d skills not listed: the skills list is over its budget of %d tokens", total-listed, skillsBudget)
	if notes := problems(got.Notes); !strings.Contains(notes, want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
	cut := fmt.Sprintf("skill-%04d", total-1)
	if out, err := callSkillTool(t, &got, "skill", `{"name":"`+cut+`"}`); err == nil {
		t.Errorf("skill %s, not listed, = %q", cut, out)
	}
}
