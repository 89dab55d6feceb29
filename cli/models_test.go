package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
)

func TestBuildBudgetAndCompaction(t *testing.T) {
	tests := []struct {
		name        string
		settings    string
		o           app.Options
		wantBudget  int
		wantWindow  int
		wantCompact engine.Compaction // Model is checked by ModelName
		wantNotice  string
	}{
		{"offline: today's default", `{}`, app.Options{Model: "offline"}, engine.DefaultBudget, 0, engine.Compaction{}, ""},
		{"built-in window", `{}`, app.Options{Model: "gpt-4o"}, 128_000 - 16_384, 128_000, engine.Compaction{}, ""},
		{"config window", `{"models": {"local": {"context_window": 8192, "max_output": 1024}}}`, app.Options{Model: "local"}, 8192 - 1024, 8192, engine.Compaction{}, ""},
		{"context_budget wins", `{"context_budget": 6000}`, app.Options{Model: "gpt-4o"}, 6000, 128_000, engine.Compaction{}, ""},
		{"--context-budget wins over the config", `{"context_budget": 6000}`, app.Options{Model: "gpt-4o", Budget: 5000}, 5000, 128_000, engine.Compaction{}, ""},
		{"a budget past the window is told", `{"context_budget": 200000}`, app.Options{Model: "gpt-4o"}, 200_000, 128_000, engine.Compaction{}, "not less than gpt-4o's context window (128000)"},
		{"trigger in tokens", `{"compact": {"trigger": 12000, "keep_turns": 3}}`, app.Options{Model: "gpt-4o"}, 128_000 - 16_384, 128_000,
			engine.Compaction{Trigger: 12000, KeepTurns: 3}, ""},
		{"trigger as a percentage of the budget", `{"compact": {"trigger": "50%"}}`, app.Options{Model: "offline", Budget: 10_000}, 10_000, 0,
			engine.Compaction{Trigger: 5000}, ""},
		{"a percentage of the default budget", `{"compact": {"trigger": "25%"}}`, app.Options{Model: "offline"}, engine.DefaultBudget, 0,
			engine.Compaction{Trigger: engine.DefaultBudget / 4}, ""},
		{"auto off", `{"compact": {"auto": false}}`, app.Options{Model: "offline"}, engine.DefaultBudget, 0, engine.Compaction{Off: true}, ""},
		{"auto on", `{"compact": {"auto": true}}`, app.Options{Model: "offline"}, engine.DefaultBudget, 0, engine.Compaction{}, ""},
		{"a compaction model", `{"compact": {"model": "offline"}}`, app.Options{Model: "gpt-4o"}, 128_000 - 16_384, 128_000, engine.Compaction{ModelName: "offline"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := trustEnv(t)
			env["OPENAI_BASE_URL"] = "http://127.0.0.1:1/v1" // never called: build makes no request
			writeFile(t, env["AGENTTY_CONFIG"], tt.settings)
			o := tt.o
			o.MaxSteps, o.Workspace = 5, t.TempDir()
			st, err := app.Build(context.Background(), o, nil, func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			cfg := st.Engine.Config()
			if cfg.Budget != tt.wantBudget || cfg.Window != tt.wantWindow {
				t.Errorf("budget %d, window %d; want %d, %d", cfg.Budget, cfg.Window, tt.wantBudget, tt.wantWindow)
			}
			got := cfg.Compact
			if (got.Model != nil) != (tt.wantCompact.ModelName != "") {
				t.Errorf("compact model %v, name %q", got.Model, got.ModelName)
			}
			got.Model = nil
			if got != tt.wantCompact {
				t.Errorf("compact = %+v, want %+v", got, tt.wantCompact)
			}
			notices := strings.Join(st.Notices, "\n")
			if tt.wantNotice != "" && !strings.Contains(notices, tt.wantNotice) || tt.wantNotice == "" && notices != "" {
				t.Errorf("notices %q, want %q", notices, tt.wantNotice)
			}
		})
	}
}

func TestCompactModelNeedsAKey(t *testing.T) {
	env := trustEnv(t)
	writeFile(t, env["AGENTTY_CONFIG"], `{"compact": {"model": "gpt-4o-mini"}}`)
	code, _, errs := runCLI(t, context.Background(), env, "run", "--model", "offline", "what is 2+2?")
	if code != 1 || !strings.Contains(errs, "compact.model: model \"gpt-4o-mini\" needs OPENAI_API_KEY") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestTrustOfCompactThroughBuild: an untrusted workspace's compact.model is
// ignored, and said so; its trigger takes effect.
func TestTrustOfCompactThroughBuild(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".agentty.json"), `{"compact": {"trigger": "50%", "model": "gpt-4o"}}`)
	env := trustEnv(t)
	st, err := app.Build(context.Background(), app.Options{Model: "offline", MaxSteps: 5, Budget: 10_000, Workspace: ws}, nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if c := st.Engine.Config().Compact; c.Trigger != 5000 || c.Model != nil {
		t.Errorf("compaction = %+v; want the trigger (50%% of 10000) and no model", c)
	}
	code, _, errs := runCLI(t, context.Background(), env, "run", "--model", "offline", "--workspace", ws, "what is 2+2?")
	if code != 0 || !strings.Contains(errs, "untrusted: ignoring compact.model,") {
		t.Errorf("exit %d, stderr %q; want compact.model ignored", code, errs)
	}
}
