package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
)

func ptr[T any](v T) *T { return &v }

func TestLookupLimits(t *testing.T) {
	cfgModels := map[string]modelConfig{
		"gpt-4o":   {MaxOutput: ptr(4096)},                             // over the built-in, field by field
		"my-model": {ContextWindow: ptr(10_000), MaxOutput: ptr(1000)}, // not built in
		"offline":  {ContextWindow: ptr(1000)},                         // offline has no window
		"qwen3:8b": {ContextWindow: ptr(40_960)},                       // a config entry over a prefix
	}
	tests := []struct {
		name string
		want modelLimits
	}{
		{"gpt-4o", modelLimits{128_000, 4096}},
		{"gpt-4o-mini", modelLimits{128_000, 16_384}},
		{"gpt-4o-2024-08-06", modelLimits{128_000, 16_384}},
		{"gpt-4.1", modelLimits{1_047_576, 32_768}},
		{"gpt-4.1-nano", modelLimits{1_047_576, 32_768}},
		{"openai/gpt-4.1-mini", modelLimits{1_047_576, 32_768}},
		{"gpt-5", modelLimits{400_000, 128_000}},
		{"gpt-5-mini", modelLimits{400_000, 128_000}},
		{"gpt-5-chat-latest", modelLimits{128_000, 0}},
		{"o3", modelLimits{200_000, 100_000}},
		{"o3-mini", modelLimits{200_000, 100_000}},
		{"o4-mini", modelLimits{200_000, 100_000}},
		{"claude-sonnet-4-5", modelLimits{200_000, 0}},
		{"llama3.1:8b", modelLimits{131_072, 0}},
		{"llama3.3", modelLimits{131_072, 0}},
		{"Qwen2.5-Coder:7B", modelLimits{32_768, 0}},
		{"qwen3:4b", modelLimits{32_768, 0}},
		{"qwen3:8b", modelLimits{40_960, 0}},
		{"mistral:7b", modelLimits{32_768, 0}},
		{"mistral-nemo", modelLimits{128_000, 0}},
		{"gemma2:9b", modelLimits{8_192, 0}},
		{"gemma3:27b", modelLimits{131_072, 0}},
		{"gemma3:1b", modelLimits{32_768, 0}},
		{"deepseek-r1:14b", modelLimits{128_000, 0}},
		{"deepseek-chat", modelLimits{65_536, 0}},
		{"my-model", modelLimits{10_000, 1000}},
		{"unknown-model", modelLimits{}},
		{"llama3", modelLimits{}}, // llama3 is not llama3.1
		{"offline", modelLimits{}},
		{"script:/tmp/x.json", modelLimits{}},
	}
	for _, tt := range tests {
		if got := lookupLimits(tt.name, cfgModels); got != tt.want {
			t.Errorf("lookupLimits(%q) = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestContextBudget(t *testing.T) {
	tests := []struct {
		name     string
		explicit int
		limits   modelLimits
		want     int
	}{
		{"unknown window: the engine's default", 0, modelLimits{}, 0},
		{"window less the output", 0, modelLimits{128_000, 16_384}, 128_000 - 16_384},
		{"no output known: 4096 reserved", 0, modelLimits{131_072, 0}, 131_072 - 4096},
		{"a small window: a quarter reserved", 0, modelLimits{8_192, 0}, 8_192 - 2_048},
		{"output as large as the window: reserved instead", 0, modelLimits{10_000, 10_000}, 10_000 - 2_500},
		{"explicit wins", 6000, modelLimits{128_000, 16_384}, 6000},
		{"explicit with no window", 6000, modelLimits{}, 6000},
	}
	for _, tt := range tests {
		if got := contextBudget(tt.explicit, tt.limits); got != tt.want {
			t.Errorf("%s: contextBudget(%d, %+v) = %d, want %d", tt.name, tt.explicit, tt.limits, got, tt.want)
		}
	}
}

// build sets the engine's budget and window from the model's limits, the
// config's context_budget and --context-budget, and its compaction from the
// compact key.
func TestBuildBudgetAndCompaction(t *testing.T) {
	tests := []struct {
		name        string
		settings    string
		o           options
		wantBudget  int
		wantWindow  int
		wantCompact engine.Compaction // Model is checked by ModelName
		wantNotice  string
	}{
		{"offline: today's default", `{}`, options{model: "offline"}, engine.DefaultBudget, 0, engine.Compaction{}, ""},
		{"built-in window", `{}`, options{model: "gpt-4o"}, 128_000 - 16_384, 128_000, engine.Compaction{}, ""},
		{"config window", `{"models": {"local": {"context_window": 8192, "max_output": 1024}}}`, options{model: "local"}, 8192 - 1024, 8192, engine.Compaction{}, ""},
		{"context_budget wins", `{"context_budget": 6000}`, options{model: "gpt-4o"}, 6000, 128_000, engine.Compaction{}, ""},
		{"--context-budget wins over the config", `{"context_budget": 6000}`, options{model: "gpt-4o", budget: 5000}, 5000, 128_000, engine.Compaction{}, ""},
		{"a budget past the window is told", `{"context_budget": 200000}`, options{model: "gpt-4o"}, 200_000, 128_000, engine.Compaction{}, "not less than gpt-4o's context window (128000)"},
		{"trigger in tokens", `{"compact": {"trigger": 12000, "keep_turns": 3}}`, options{model: "gpt-4o"}, 128_000 - 16_384, 128_000,
			engine.Compaction{Trigger: 12000, KeepTurns: 3}, ""},
		{"trigger as a percentage of the budget", `{"compact": {"trigger": "50%"}}`, options{model: "offline", budget: 10_000}, 10_000, 0,
			engine.Compaction{Trigger: 5000}, ""},
		{"a percentage of the default budget", `{"compact": {"trigger": "25%"}}`, options{model: "offline"}, engine.DefaultBudget, 0,
			engine.Compaction{Trigger: engine.DefaultBudget / 4}, ""},
		{"auto off", `{"compact": {"auto": false}}`, options{model: "offline"}, engine.DefaultBudget, 0, engine.Compaction{Off: true}, ""},
		{"auto on", `{"compact": {"auto": true}}`, options{model: "offline"}, engine.DefaultBudget, 0, engine.Compaction{}, ""},
		{"a compaction model", `{"compact": {"model": "offline"}}`, options{model: "gpt-4o"}, 128_000 - 16_384, 128_000, engine.Compaction{ModelName: "offline"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := trustEnv(t)
			env["OPENAI_BASE_URL"] = "http://127.0.0.1:1/v1" // never called: build makes no request
			writeFile(t, env["AGENTTY_CONFIG"], tt.settings)
			o := tt.o
			o.maxSteps, o.workspace = 5, t.TempDir()
			st, err := build(context.Background(), o, nil, func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			cfg := st.engine.Config()
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
			notices := strings.Join(st.notices, "\n")
			if tt.wantNotice != "" && !strings.Contains(notices, tt.wantNotice) || tt.wantNotice == "" && notices != "" {
				t.Errorf("notices %q, want %q", notices, tt.wantNotice)
			}
		})
	}
}

// A compaction model that cannot be made is an error naming compact.model.
func TestCompactModelNeedsAKey(t *testing.T) {
	env := trustEnv(t)
	writeFile(t, env["AGENTTY_CONFIG"], `{"compact": {"model": "gpt-4o-mini"}}`)
	code, _, errs := runCLI(t, context.Background(), env, "run", "--model", "offline", "what is 2+2?")
	if code != 1 || !strings.Contains(errs, "compact.model: model \"gpt-4o-mini\" needs OPENAI_API_KEY") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestCompactAndModelsConfigErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"trigger without %", "{\n  \"compact\": {\n    \"trigger\": \"80\"\n  }\n}", `:3: field compact.trigger: want a number of tokens or a percentage of the budget such as "80%" (above 0, at most 100), got "80"`},
		{"trigger 0%", "{\"compact\": {\"trigger\": \"0%\"}}", `:1: field compact.trigger: want a number of tokens or a percentage`},
		{"trigger over 100%", "{\n\"compact\": {\"trigger\": \"150%\"}}", `:2: field compact.trigger:`},
		{"trigger not a number", "{\"compact\": {\"trigger\": \"lots%\"}}", `field compact.trigger:`},
		{"trigger negative", "{\"compact\": {\"trigger\": -5}}", `field compact.trigger: want a number of tokens or a percentage of the budget such as "80%" (above 0, at most 100), got -5`},
		{"trigger fractional", "{\"compact\": {\"trigger\": 1.5}}", `got 1.5`},
		{"trigger a bool", "{\"compact\": {\"trigger\": true}}", `got true`},
		{"keep_turns 0", "{\n\"compact\": {\n\"keep_turns\": 0}}", `:3: field compact.keep_turns: want a positive number of user turns to keep verbatim, got 0`},
		{"keep_turns a string", "{\"compact\": {\"keep_turns\": \"2\"}}", `field compact.keep_turns: expected int, got string`},
		{"auto a string", "{\"compact\": {\"auto\": \"no\"}}", `field compact.auto: expected bool, got string`},
		{"unknown compact field", "{\"compact\": {\n\"every\": 3}}", `:2: unknown field "every"`},
		{"window 0", "{\"models\": {\n\"m\": {\n\"context_window\": 0}}}", `:3: field models.m.context_window: want a positive number of tokens, got 0`},
		{"negative output", "{\"models\": {\"m\": {\"context_window\": 1000, \"max_output\": -1}}}", `field models.m.max_output: want a positive number of tokens, got -1`},
		{"output fills the window", "{\"models\": {\n\"m\": {\"context_window\": 1000,\n\"max_output\": 1000}}}", `:3: field models.m.max_output: 1000 leaves no room for input in the context window of 1000; want less than context_window`},
		{"an empty entry", "{\"models\": {\n\"m\": {}}}", `:2: field models.m: give context_window (and max_output), in tokens`},
		{"a window as a string", "{\"models\": {\"m\": {\"context_window\": \"8k\"}}}", `context_window: expected int, got string`},
		{"unknown model field", "{\"models\": {\"m\": {\n\"context\": 8192}}}", `:2: unknown field "context"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			_, err := parseConfig(path, []byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), "config "+path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one naming %s and %q", err, path, tt.want)
			}
		})
	}
}

func TestCompactConfigParses(t *testing.T) {
	c, err := parseConfig("c.json", []byte(`{"compact": {"auto": false, "trigger": "62.5%", "keep_turns": 4, "model": "offline"},
		"models": {"gpt-4o": {"max_output": 4096}, "local": {"context_window": 8192}}}`))
	if err != nil {
		t.Fatal(err)
	}
	cc := c.Compact
	if cc.Auto == nil || *cc.Auto || cc.triggerPct != 62.5 || cc.trigger != 0 || *cc.KeepTurns != 4 || cc.Model != "offline" {
		t.Errorf("compact = %+v", cc)
	}
	if *c.Models["gpt-4o"].MaxOutput != 4096 || c.Models["gpt-4o"].ContextWindow != nil || *c.Models["local"].ContextWindow != 8192 {
		t.Errorf("models = %+v", c.Models)
	}
}

// The workspace's config is laid over the user's field by field.
func TestMergeModelsAndCompact(t *testing.T) {
	user, err := parseConfig("u.json", []byte(`{"models": {"m": {"context_window": 8192}}, "compact": {"trigger": "50%", "keep_turns": 3}}`))
	if err != nil {
		t.Fatal(err)
	}
	ws, err := parseConfig("w.json", []byte(`{"models": {"m": {"max_output": 1024}, "n": {"context_window": 4096}}, "compact": {"trigger": 9000, "auto": false}}`))
	if err != nil {
		t.Fatal(err)
	}
	user.merge(ws)
	if got := lookupLimits("m", user.Models); got != (modelLimits{8192, 1024}) {
		t.Errorf("m = %+v", got)
	}
	if got := lookupLimits("n", user.Models); got != (modelLimits{4096, 0}) {
		t.Errorf("n = %+v", got)
	}
	cc := user.Compact
	if cc.trigger != 9000 || cc.triggerPct != 0 || *cc.KeepTurns != 3 || cc.Auto == nil || *cc.Auto {
		t.Errorf("compact = %+v", cc)
	}
}

// Untrusted, compaction's auto, trigger and keep_turns and the models'
// numbers take effect; compact.model (another model may reach another
// host) does not, unless it is offline.
func TestTrustOfCompactAndModels(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".agentty.json"), `{"compact": {"auto": false, "trigger": "50%", "keep_turns": 3, "model": "gpt-4o"},
		"models": {"local": {"context_window": 8192, "max_output": 1024}}}`)
	w, err := readWorkspaceConfig(ws, &settings{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.riskyList(), " "); got != "compact.model" {
		t.Errorf("risky = %q, want compact.model", got)
	}
	s := w.safe()
	if s.Compact.Model != "" || s.Compact.Auto == nil || *s.Compact.Auto || s.Compact.triggerPct != 50 || *s.Compact.KeepTurns != 3 {
		t.Errorf("safe compact = %+v", s.Compact)
	}
	if got := lookupLimits("local", s.Models); got != (modelLimits{8192, 1024}) {
		t.Errorf("safe models: local = %+v", got)
	}

	writeFile(t, filepath.Join(ws, ".agentty.json"), `{"compact": {"model": "offline"}}`)
	if w, err = readWorkspaceConfig(ws, &settings{}); err != nil || len(w.risky) != 0 || w.safe().Compact.Model != "offline" {
		t.Errorf("compact.model offline: risky %v, err %v", w.risky, err)
	}

	// Through build and agentty run: compact.model is ignored and said
	// so; the trigger takes effect.
	writeFile(t, filepath.Join(ws, ".agentty.json"), `{"compact": {"trigger": "50%", "model": "gpt-4o"}}`)
	env := trustEnv(t)
	st, err := build(context.Background(), options{model: "offline", maxSteps: 5, budget: 10_000, workspace: ws}, nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if c := st.engine.Config().Compact; c.Trigger != 5000 || c.Model != nil {
		t.Errorf("compaction = %+v; want the trigger (50%% of 10000) and no model", c)
	}
	code, _, errs := runCLI(t, context.Background(), env, "run", "--model", "offline", "--workspace", ws, "what is 2+2?")
	if code != 0 || !strings.Contains(errs, "untrusted: ignoring compact.model,") {
		t.Errorf("exit %d, stderr %q; want compact.model ignored", code, errs)
	}
}

// A field added to compact or to a models entry later is risky until
// someone decides otherwise.
func TestLaterFieldsAreRisky(t *testing.T) {
	type laterCompact struct {
		Auto *bool  `json:"auto,omitempty"`
		Hook string `json:"hook,omitempty"`
	}
	type laterModel struct {
		ContextWindow *int   `json:"context_window,omitempty"`
		Endpoint      string `json:"endpoint,omitempty"`
	}
	got := map[string]string{}
	add := func(k string, v any) { got[k] = mustJSON(t, v) }
	riskyFields("compact.", &laterCompact{Auto: ptr(false), Hook: "rm -rf"}, safeCompactKeys, add)
	riskyFields("models.m.", &laterModel{ContextWindow: ptr(10), Endpoint: "http://elsewhere"}, safeModelKeys, add)
	if len(got) != 2 || got["compact.hook"] != `"rm -rf"` || got["models.m.endpoint"] != `"http://elsewhere"` {
		t.Errorf("risky = %v, want compact.hook and models.m.endpoint", got)
	}
}
