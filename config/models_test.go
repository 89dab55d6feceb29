package config

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestLookupLimits(t *testing.T) {
	cfgModels := map[string]ModelConfig{
		"gpt-4o":   {MaxOutput: ptr(4096)},                             // over the built-in, field by field
		"my-model": {ContextWindow: ptr(10_000), MaxOutput: ptr(1000)}, // not built in
		"offline":  {ContextWindow: ptr(1000)},                         // offline has no window
		"qwen3:8b": {ContextWindow: ptr(40_960)},                       // a config entry over a prefix
	}
	tests := []struct {
		name string
		want ModelLimits
	}{
		{"gpt-4o", ModelLimits{128_000, 4096}},
		{"gpt-4o-mini", ModelLimits{128_000, 16_384}},
		{"gpt-4o-2024-08-06", ModelLimits{128_000, 16_384}},
		{"gpt-4.1", ModelLimits{1_047_576, 32_768}},
		{"gpt-4.1-nano", ModelLimits{1_047_576, 32_768}},
		{"openai/gpt-4.1-mini", ModelLimits{1_047_576, 32_768}},
		{"gpt-5", ModelLimits{400_000, 128_000}},
		{"gpt-5-mini", ModelLimits{400_000, 128_000}},
		{"gpt-5-chat-latest", ModelLimits{128_000, 0}},
		{"o3", ModelLimits{200_000, 100_000}},
		{"o3-mini", ModelLimits{200_000, 100_000}},
		{"o4-mini", ModelLimits{200_000, 100_000}},
		{"claude-sonnet-4-5", ModelLimits{200_000, 0}},
		{"llama3.1:8b", ModelLimits{131_072, 0}},
		{"llama3.3", ModelLimits{131_072, 0}},
		{"Qwen2.5-Coder:7B", ModelLimits{32_768, 0}},
		{"qwen3:4b", ModelLimits{32_768, 0}},
		{"qwen3:8b", ModelLimits{40_960, 0}},
		{"mistral:7b", ModelLimits{32_768, 0}},
		{"mistral-nemo", ModelLimits{128_000, 0}},
		{"gemma2:9b", ModelLimits{8_192, 0}},
		{"gemma3:27b", ModelLimits{131_072, 0}},
		{"gemma3:1b", ModelLimits{32_768, 0}},
		{"deepseek-r1:14b", ModelLimits{128_000, 0}},
		{"deepseek-chat", ModelLimits{65_536, 0}},
		{"my-model", ModelLimits{10_000, 1000}},
		{"unknown-model", ModelLimits{}},
		{"llama3", ModelLimits{}}, // llama3 is not llama3.1
		{"offline", ModelLimits{}},
		{"script:/tmp/x.json", ModelLimits{}},
	}
	for _, tt := range tests {
		if got := LookupLimits(tt.name, cfgModels); got != tt.want {
			t.Errorf("LookupLimits(%q) = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestContextBudget(t *testing.T) {
	tests := []struct {
		name     string
		explicit int
		limits   ModelLimits
		want     int
	}{
		{"unknown window: the engine's default", 0, ModelLimits{}, 0},
		{"window less the output", 0, ModelLimits{128_000, 16_384}, 128_000 - 16_384},
		{"no output known: 4096 reserved", 0, ModelLimits{131_072, 0}, 131_072 - 4096},
		{"a small window: a quarter reserved", 0, ModelLimits{8_192, 0}, 8_192 - 2_048},
		{"output as large as the window: reserved instead", 0, ModelLimits{10_000, 10_000}, 10_000 - 2_500},
		{"explicit wins", 6000, ModelLimits{128_000, 16_384}, 6000},
		{"explicit with no window", 6000, ModelLimits{}, 6000},
	}
	for _, tt := range tests {
		if got := ContextBudgetFor(tt.explicit, tt.limits); got != tt.want {
			t.Errorf("%s: ContextBudgetFor(%d, %+v) = %d, want %d", tt.name, tt.explicit, tt.limits, got, tt.want)
		}
	}
}

// build sets the engine's budget and window from the model's limits, the
// config's context_budget and --context-budget, and its compaction from the
// compact key.
// A compaction model that cannot be made is an error naming compact.model.
func TestCompactAndModelsConfigErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"trigger without %", "{\n  \"compact\": {\n    \"trigger\": \"80\"\n  }\n}", `:3: field compact.trigger: want a number of tokens from 1 to 10000000 or a percentage of the budget such as "80%" (above 0, at most 100), got "80"`},
		{"trigger 0%", "{\"compact\": {\"trigger\": \"0%\"}}", `:1: field compact.trigger: want a number of tokens from 1 to 10000000 or a percentage`},
		{"trigger over 100%", "{\n\"compact\": {\"trigger\": \"150%\"}}", `:2: field compact.trigger:`},
		{"trigger not a number", "{\"compact\": {\"trigger\": \"lots%\"}}", `field compact.trigger:`},
		{"trigger negative", "{\"compact\": {\"trigger\": -5}}", `field compact.trigger: want a number of tokens from 1 to 10000000 or a percentage of the budget such as "80%" (above 0, at most 100), got -5`},
		{"trigger fractional", "{\"compact\": {\"trigger\": 1.5}}", `got 1.5`},
		{"trigger a bool", "{\"compact\": {\"trigger\": true}}", `got true`},
		{"keep_turns 0", "{\n\"compact\": {\n\"keep_turns\": 0}}", `:3: field compact.keep_turns: want a number of user turns to keep verbatim from 1 to 1000, got 0`},
		{"keep_turns a string", "{\"compact\": {\"keep_turns\": \"2\"}}", `field compact.keep_turns: expected int, got string`},
		{"auto a string", "{\"compact\": {\"auto\": \"no\"}}", `field compact.auto: expected bool, got string`},
		{"unknown compact field", "{\"compact\": {\n\"every\": 3}}", `:2: unknown field "every"`},
		{"window 0", "{\"models\": {\n\"m\": {\n\"context_window\": 0}}}", `:3: field models.m.context_window: want a number of tokens from 1 to 10000000, got 0`},
		{"negative output", "{\"models\": {\"m\": {\"context_window\": 1000, \"max_output\": -1}}}", `field models.m.max_output: want a number of tokens from 1 to 10000000, got -1`},
		{"output fills the window", "{\"models\": {\n\"m\": {\"context_window\": 1000,\n\"max_output\": 1000}}}", `:3: field models.m.max_output: 1000 leaves no room for input in the context window of 1000; want less than context_window`},
		{"an empty entry", "{\"models\": {\n\"m\": {}}}", `:2: field models.m: give context_window (and max_output), in tokens`},
		{"a window as a string", "{\"models\": {\"m\": {\"context_window\": \"8k\"}}}", `context_window: expected int, got string`},
		{"unknown model field", "{\"models\": {\"m\": {\n\"context\": 8192}}}", `:2: unknown field "context"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "json")
			_, err := Parse(path, []byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), "config "+path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one naming %s and %q", err, path, tt.want)
			}
		})
	}
}

func TestCompactConfigParses(t *testing.T) {
	c, err := Parse("c.json", []byte(`{"compact": {"auto": false, "trigger": "62.5%", "keep_turns": 4, "model": "offline"},
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
	user, err := Parse("u.json", []byte(`{"models": {"m": {"context_window": 8192}}, "compact": {"trigger": "50%", "keep_turns": 3}}`))
	if err != nil {
		t.Fatal(err)
	}
	ws, err := Parse("w.json", []byte(`{"models": {"m": {"max_output": 1024}, "n": {"context_window": 4096}}, "compact": {"trigger": 9000, "auto": false}}`))
	if err != nil {
		t.Fatal(err)
	}
	user.Merge(ws)
	if got := LookupLimits("m", user.Models); got != (ModelLimits{8192, 1024}) {
		t.Errorf("m = %+v", got)
	}
	if got := LookupLimits("n", user.Models); got != (ModelLimits{4096, 0}) {
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

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTrustOfCompactAndModels(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".agentty.json"), `{"compact": {"auto": false, "trigger": "50%", "keep_turns": 3, "model": "gpt-4o"},
		"models": {"local": {"context_window": 8192, "max_output": 1024}}}`)
	w, err := ReadWorkspace(ws, &Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.RiskyList(), " "); got != "compact.model" {
		t.Errorf("risky = %q, want compact.model", got)
	}
	s := w.Safe()
	if s.Compact.Model != "" || s.Compact.Auto == nil || *s.Compact.Auto || s.Compact.triggerPct != 50 || *s.Compact.KeepTurns != 3 {
		t.Errorf("safe compact = %+v", s.Compact)
	}
	if got := LookupLimits("local", s.Models); got != (ModelLimits{8192, 1024}) {
		t.Errorf("safe models: local = %+v", got)
	}

	writeFile(t, filepath.Join(ws, ".agentty.json"), `{"compact": {"model": "offline"}}`)
	if w, err = ReadWorkspace(ws, &Settings{}); err != nil || len(w.Risky) != 0 || w.Safe().Compact.Model != "offline" {
		t.Errorf("compact.model offline: risky %v, err %v", w.Risky, err)
	}
}
