package offline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/tools"
)

// TestOfflinePlanner runs a conversation through the real engine and the
// built-in tools, checking which tools the planner used and what it answered.
func TestOfflinePlanner(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# hello\n"), 0o644)
	ws, err := tools.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	reg, err := engine.NewRegistry(append(tools.Builtins(), ws.ListDir(), ws.ReadFile())...)
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Config{Model: offline.Model{}, Tools: reg})
	s := engine.NewSession("s")
	turns := []struct {
		task      string
		wantTools []string
		want      string
	}{
		{"what is 17*23?", []string{"calculator"}, "391"},
		{"What's (2 + 3) times 4?", []string{"calculator"}, "= 20"},
		{"remember that my name is Ada", []string{"remember"}, "remembered name = Ada"},
		{"what is my name?", []string{"recall"}, "Your name is Ada."},
		{"My favourite colour is teal.", []string{"remember"}, "favourite colour = teal"},
		{"what do you remember?", []string{"recall"}, "name = Ada\nfavourite colour = teal"},
		{"forget my name", []string{"forget"}, "forgot name"},
		{"what is my name?", nil, `nothing remembered about "name"`},
		{"what time is it?", []string{"clock"}, "UTC"},
		{"what is 1/0", []string{"calculator"}, "The calculator tool failed: calculator: division by zero"},
		{"list files", []string{"list_dir"}, "README.md (8 bytes)"},
		{"read README.md", []string{"read_file"}, "# hello"},
		{"write me a poem", nil, "offline"},
	}
	for _, tt := range turns {
		res, used := runTask(e, s, tt.task)
		if res.StopReason != engine.StopAnswered {
			t.Fatalf("%q: stop %s %v", tt.task, res.StopReason, res.Err)
		}
		if strings.Join(used, ",") != strings.Join(tt.wantTools, ",") || !strings.Contains(res.Answer, tt.want) {
			t.Errorf("%q: tools %v, answer %q; want tools %v, answer containing %q", tt.task, used, res.Answer, tt.wantTools, tt.want)
		}
	}
	if !strings.Contains(offline.Help, "OPENAI_API_KEY") || !strings.Contains(offline.Help, "--base-url") {
		t.Errorf("the offline help does not say how to connect a real model")
	}
}

// runTask runs task on s and returns the result and the tools it used, in
// the order they started.
func runTask(e *engine.Engine, s *engine.Session, task string) (engine.Result, []string) {
	var used []string
	sink := engine.SinkFunc(func(ev engine.Event) error {
		if d, ok := ev.Data.(*engine.ToolStarted); ok {
			used = append(used, d.Name)
		}
		return nil
	})
	return e.Run(context.Background(), s, task, sink), used
}

// The offline model carries the tour: it writes a file when asked, uses a
// skill whose name it is given, and takes two requests at once as two
// calls of one decision.
func TestOfflineWritesUsesSkillsAndTakesTwo(t *testing.T) {
	req := func(task string, tools ...string) *engine.Request {
		r := &engine.Request{Messages: []engine.Message{{Role: engine.RoleUser, Content: task}}}
		for _, n := range tools {
			r.Tools = append(r.Tools, engine.ToolSchema{Name: n})
		}
		return r
	}
	for task, want := range map[string]string{
		"write hello to notes.txt":                        `write_file {"content":"hello\n","path":"notes.txt"}`,
		"please use the release-notes skill":              `skill {"name":"release-notes"}`,
		"what is 17*23 and remember that my city is Lyon": `calculator {"expression":"17*23"} | remember {"key":"city","value":"Lyon"}`,
		"remember that my name is Ada and Bob":            `remember {"key":"name","value":"Ada and Bob"}`,
	} {
		d, err := offline.Model{}.Decide(context.Background(), req(task, "write_file", "skill", "calculator", "remember"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range d.ToolCalls {
			got = append(got, c.Name+" "+string(c.Args))
		}
		if strings.Join(got, " | ") != want {
			t.Errorf("%q: %q, want %q (text %q)", task, strings.Join(got, " | "), want, d.Text)
		}
	}
}
