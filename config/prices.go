package config

import (
	"strings"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
)

// Prices of well-known models in US dollars per million tokens (input,
// cached input, output), as their providers published them in 2025,
// matched by the longest prefix of the name after any "provider/" part
// (OpenRouter's names). They change: the config's models key overrides
// them ("models": {"NAME": {"price": {"input": 2.5, "cached_input": 1.25,
// "output": 10}}}), and a model not here has no price: its cost is
// unknown, never zero.
var builtinPrices = []struct {
	prefix string
	price  engine.Price
}{
	{"gpt-4o", engine.Price{Input: 2.5, CachedInput: 1.25, Output: 10}},
	{"gpt-4o-mini", engine.Price{Input: 0.15, CachedInput: 0.075, Output: 0.6}},
	{"gpt-4.1", engine.Price{Input: 2, CachedInput: 0.5, Output: 8}},
	{"gpt-4.1-mini", engine.Price{Input: 0.4, CachedInput: 0.1, Output: 1.6}},
	{"gpt-4.1-nano", engine.Price{Input: 0.1, CachedInput: 0.025, Output: 0.4}},
	{"gpt-5", engine.Price{Input: 1.25, CachedInput: 0.125, Output: 10}},
	{"gpt-5-mini", engine.Price{Input: 0.25, CachedInput: 0.025, Output: 2}},
	{"gpt-5-nano", engine.Price{Input: 0.05, CachedInput: 0.005, Output: 0.4}},
	{"o3", engine.Price{Input: 2, CachedInput: 0.5, Output: 8}},
	{"o3-mini", engine.Price{Input: 1.1, CachedInput: 0.55, Output: 4.4}},
	{"o4-mini", engine.Price{Input: 1.1, CachedInput: 0.275, Output: 4.4}},
	{"claude-opus-4", engine.Price{Input: 15, CachedInput: 1.5, Output: 75}},
	{"claude-opus-4-5", engine.Price{Input: 5, CachedInput: 0.5, Output: 25}},
	{"claude-sonnet-4", engine.Price{Input: 3, CachedInput: 0.3, Output: 15}},
	{"claude-3-7-sonnet", engine.Price{Input: 3, CachedInput: 0.3, Output: 15}},
	{"claude-3-5-sonnet", engine.Price{Input: 3, CachedInput: 0.3, Output: 15}},
	{"claude-haiku-4-5", engine.Price{Input: 1, CachedInput: 0.1, Output: 5}},
	{"claude-3-5-haiku", engine.Price{Input: 0.8, CachedInput: 0.08, Output: 4}},
	{"gemini-2.5-pro", engine.Price{Input: 1.25, CachedInput: 0.31, Output: 10}},
	{"gemini-2.5-flash", engine.Price{Input: 0.3, CachedInput: 0.075, Output: 2.5}},
	{"gemini-2.5-flash-lite", engine.Price{Input: 0.1, CachedInput: 0.025, Output: 0.4}},
	{"gemini-2.0-flash", engine.Price{Input: 0.1, CachedInput: 0.025, Output: 0.4}},
	{"deepseek-chat", engine.Price{Input: 0.27, CachedInput: 0.07, Output: 1.1}},
	{"deepseek-reasoner", engine.Price{Input: 0.55, CachedInput: 0.14, Output: 2.19}},
	{"mistral-large", engine.Price{Input: 2, Output: 6}},
	{"mistral-medium", engine.Price{Input: 0.4, Output: 2}},
	{"mistral-small", engine.Price{Input: 0.1, Output: 0.3}},
	{"codestral", engine.Price{Input: 0.3, Output: 0.9}},
	{"llama-3.3-70b-versatile", engine.Price{Input: 0.59, Output: 0.79}}, // Groq
	{"llama-3.1-8b-instant", engine.Price{Input: 0.05, Output: 0.08}},    // Groq
}

// LookupPrice returns model name's price: the config's entry of that
// name, else the built-in table's with the longest prefix of it. The
// offline model costs nothing; a script model and a name not known have
// no price.
func LookupPrice(name string, models map[string]ModelConfig) (engine.Price, bool) {
	if mc, ok := models[name]; ok && mc.Price != nil {
		return *mc.Price, true
	}
	if name == offline.Name {
		return engine.Price{}, true
	}
	base := strings.ToLower(name)
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	var p engine.Price
	best := -1
	for _, b := range builtinPrices {
		if strings.HasPrefix(base, b.prefix) && len(b.prefix) > best {
			p, best = b.price, len(b.prefix)
		}
	}
	return p, best >= 0
}
