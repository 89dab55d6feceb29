package config

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
)

// A model's context window decides the default context budget: the window
// less the output the model may write. The config's models key gives them
// by name; a small built-in table knows well-known names.

// ModelConfig is one entry of the config's models key.
type ModelConfig struct {
	// ContextWindow is the tokens a request and its answer may hold
	// together; MaxOutput the most the model writes in one answer.
	ContextWindow *int `json:"context_window,omitempty"`
	MaxOutput     *int `json:"max_output,omitempty"`
	// Price is what the model costs (US dollars per million tokens),
	// over the built-in table's (prices.go).
	Price *engine.Price `json:"price,omitempty"`
}

// ModelLimits are a model's context window and its most output, 0 where
// unknown.
type ModelLimits struct {
	Window    int
	MaxOutput int
}

// builtinModels are the limits of well-known models, matched by the
// longest prefix of the name (see LookupLimits). Windows are the models'
// own; a local server may run one with less (Ollama's num_ctx, llama.cpp's
// --ctx-size): say so in the config's models key. Where a provider has
// given two figures over time, the smaller is here.
var builtinModels = []struct {
	prefix string
	limits ModelLimits
}{
	{"gpt-4o", ModelLimits{128_000, 16_384}}, // gpt-4o-mini too
	{"gpt-4.1", ModelLimits{1_047_576, 32_768}},
	{"gpt-5", ModelLimits{400_000, 128_000}},
	{"gpt-5-chat", ModelLimits{128_000, 0}},
	{"o3", ModelLimits{200_000, 100_000}}, // o3-mini, o3-pro too
	{"o4-mini", ModelLimits{200_000, 100_000}},
	{"claude-", ModelLimits{200_000, 0}},
	{"llama3.1", ModelLimits{131_072, 0}},
	{"llama3.2", ModelLimits{131_072, 0}},
	{"llama3.3", ModelLimits{131_072, 0}},
	{"qwen2.5", ModelLimits{32_768, 0}}, // the native window; 128K needs YaRN
	{"qwen3", ModelLimits{32_768, 0}},
	{"mistral", ModelLimits{32_768, 0}},
	{"mistral-nemo", ModelLimits{128_000, 0}},
	{"mistral-large", ModelLimits{128_000, 0}},
	{"gemma", ModelLimits{8_192, 0}}, // gemma and gemma2
	{"gemma3", ModelLimits{131_072, 0}},
	{"gemma3:1b", ModelLimits{32_768, 0}},
	{"gemma3n", ModelLimits{32_768, 0}},
	{"deepseek-chat", ModelLimits{65_536, 0}},
	{"deepseek-reasoner", ModelLimits{65_536, 0}},
	{"deepseek-r1", ModelLimits{128_000, 0}},
	{"deepseek-v3", ModelLimits{128_000, 0}},
	{"deepseek-coder-v2", ModelLimits{128_000, 0}},
}

// LookupLimits returns what is known of model name's limits: the config's
// entry of that very name, field by field over the built-in table's entry
// with the longest prefix of the name (compared in lower case, after any
// "provider/" part). The offline and script models have no window.
func LookupLimits(name string, models map[string]ModelConfig) ModelLimits {
	if name == offline.Name || strings.HasPrefix(name, "script:") {
		return ModelLimits{}
	}
	var l ModelLimits
	base := strings.ToLower(name)
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	best := -1
	for _, b := range builtinModels {
		if strings.HasPrefix(base, b.prefix) && len(b.prefix) > best {
			l, best = b.limits, len(b.prefix)
		}
	}
	if mc, ok := models[name]; ok {
		if mc.ContextWindow != nil {
			l.Window = *mc.ContextWindow
		}
		if mc.MaxOutput != nil {
			l.MaxOutput = *mc.MaxOutput
		}
	}
	return l
}

// OutputReserve is kept for the answer when a model's most output is not
// known: 4,096 tokens, or a quarter of a small window.
func OutputReserve(window int) int { return min(4096, window/4) }

// ContextBudgetFor is the engine's budget: explicit (--context-budget or the
// config's context_budget) when set, else the window less the model's most
// output (or OutputReserve), else 0: the engine's default.
func ContextBudgetFor(explicit int, l ModelLimits) int {
	if explicit > 0 {
		return explicit
	}
	if l.Window <= 0 {
		return 0
	}
	reserve := l.MaxOutput
	if reserve <= 0 || reserve >= l.Window {
		reserve = OutputReserve(l.Window)
	}
	return l.Window - reserve
}

// BudgetNotice says when an explicit budget leaves no room for the
// answer in the model's window; "" otherwise.
func BudgetNotice(name string, budget int, l ModelLimits) string {
	if l.Window <= 0 || budget <= 0 || budget < l.Window {
		return ""
	}
	return fmt.Sprintf("the context budget (%d tokens) is not less than %s's context window (%d): requests may be refused as too long (set context_budget lower, or models.%s.context_window if the window is wrong)",
		budget, name, l.Window, name)
}

// CompactConfig is the config's compact key: how the history is compacted
// when a request grows too long (engine.Compaction).
type CompactConfig struct {
	// Auto false turns compaction off (default true).
	Auto *bool `json:"auto,omitempty"`
	// Trigger is a number of tokens, or a percentage of the budget such
	// as "80%" (parsed into trigger or triggerPct).
	Trigger   any    `json:"trigger,omitempty"`
	KeepTurns *int   `json:"keep_turns,omitempty"`
	Model     string `json:"model,omitempty"`

	trigger    int     // tokens
	triggerPct float64 // percent of the budget
}

// ParseTrigger reads compact.trigger: a whole number of tokens from 1 to
// 10,000,000, or a percentage of the budget above 0 and at most 100
// ("80%").
func ParseTrigger(v any) (tokens int, pct float64, err error) {
	switch t := v.(type) {
	case float64:
		if t >= 1 && t <= limitTokens && t == math.Trunc(t) {
			return int(t), 0, nil
		}
	case string:
		if num, ok := strings.CutSuffix(t, "%"); ok && decimal.MatchString(num) {
			if p, err := strconv.ParseFloat(num, 64); err == nil && p > 0 && p <= 100 {
				return 0, p, nil
			}
		}
	}
	got, _ := json.Marshal(v)
	return 0, 0, fmt.Errorf(`want a number of tokens from 1 to %d or a percentage of the budget such as "80%%" (above 0, at most 100), got %s`, limitTokens, got)
}

// decimal is a plain decimal number: digits, perhaps a fraction.
var decimal = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// TriggerTokens is where compaction starts for a budget of budget tokens:
// the trigger's tokens, or its percentage of the budget (0: not set).
func (c CompactConfig) TriggerTokens(budget int) int {
	if c.triggerPct > 0 {
		return max(1, int(float64(budget)*c.triggerPct/100))
	}
	return c.trigger
}
