package config

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rangeCases are one value out of range for every number a config takes,
// each with the key its error must name and the range it must give.
var rangeCases = []struct {
	key, body, want string
}{
	{"temperature", `{"temperature": 1e308}`, ":1: field temperature: want a number from 0 to 2, got 1e+308"},
	{"temperature", "{\n\"temperature\": -0.5}", ":2: field temperature: want a number from 0 to 2, got -0.5"},
	{"context_budget", `{"context_budget": -1}`, "field context_budget: want a number of tokens from 1 to 10000000, got -1"},
	{"context_budget", `{"context_budget": 2000000000}`, "field context_budget: want a number of tokens from 1 to 10000000, got 2000000000"},
	{"instructions_share", `{"instructions_share": 100000}`, "field instructions_share: want a percentage of the context budget from 1 to 100, got 100000"},
	{"instructions_share", `{"instructions_share": -5}`, "field instructions_share: want a percentage of the context budget from 1 to 100, got -5"},
	{"ask_timeout", `{"ask_timeout": -3}`, "field ask_timeout: want a time limit above 0 and at most 24h, got -3s"},
	{"ask_timeout", `{"ask_timeout": 1e30}`, "field ask_timeout: want a time limit above 0 and at most 24h"},
	{"ask_timeout", `{"ask_timeout": "25h"}`, "field ask_timeout: want a time limit above 0 and at most 24h, got 25h0m0s"},
	{"max_steps", `{"max_steps": 1000000}`, "field max_steps: want a number of steps from 1 to 10000, got 1000000"},
	{"max_steps", `{"max_steps": -2}`, "field max_steps: want a number of steps from 1 to 10000, got -2"},
	{"max_cost", `{"max_cost": -1}`, "field max_cost: want US dollars from 0 to 10000, got -1"},
	{"max_cost", `{"max_cost": 1e300}`, "field max_cost: want US dollars from 0 to 10000, got 1e+300"},
	{"max_tokens", `{"max_tokens": -7}`, "field max_tokens: want a number of tokens from 1 to 1000000000, got -7"},
	{"max_tokens", `{"max_tokens": 9223372036854775807}`, "field max_tokens: want a number of tokens from 1 to 1000000000, got 9223372036854775807"},
	{"max_depth", `{"max_depth": 100}`, "field max_depth: want a number from 1 to 8, got 100"},
	{"max_tool_calls", `{"max_tool_calls": 1000000}`, "field max_tool_calls: want a number of tool calls from 1 to 1000, got 1000000"},
	{"max_tool_calls", `{"max_tool_calls": -1}`, "field max_tool_calls: want a number of tool calls from 1 to 1000, got -1"},
	{"max_answer_bytes", `{"max_answer_bytes": 1000000000000}`, "field max_answer_bytes: want a number of bytes from 1024 to 268435456, got 1000000000000"},
	{"max_answer_bytes", `{"max_answer_bytes": 100}`, "field max_answer_bytes: want a number of bytes from 1024 to 268435456, got 100"},
	{"max_depth", `{"max_depth": -1}`, "field max_depth: want a number from 1 to 8, got -1"},
	{"models.*.max_output", `{"models": {"m": {"max_output": -3}}}`, "field models.m.max_output: want a number of tokens from 1 to 10000000, got -3"},
	{"models.*.price.cached_input", `{"models": {"m": {"price": {"input": 1, "cached_input": -2, "output": 1}}}}`, "field models.m.price.cached_input: want US dollars per million tokens from 0 to 10000, got -2"},
	{"models.*.price.output", `{"models": {"m": {"price": {"input": 1, "output": 20000}}}}`, "field models.m.price.output: want US dollars per million tokens from 0 to 10000, got 20000"},
	{"tools.*.timeout", `{"tools": {"run_shell": {"timeout": "100000h"}}}`, "field tools.run_shell.timeout: want a time limit above 0 and at most 24h, got 100000h0m0s"},
	{"tools.*.timeout", `{"tools": {"run_shell": {"timeout": "-1s"}}}`, "field tools.run_shell.timeout:"},
	{"mcpServers.*.timeout", `{"mcpServers": {"s": {"command": "x", "timeout": 1e30}}}`, "field mcpServers.s.timeout: want a time limit above 0 and at most 24h"},
	{"mcpServers.*.timeout", `{"mcpServers": {"s": {"command": "x", "timeout": -1}}}`, "field mcpServers.s.timeout: want a time limit above 0 and at most 24h, got -1s"},
	{"mcpServers.*.timeout", `{"mcpServers": {"s": {"command": "x", "timeout": "-2562047h47m16.854775808s"}}}`, "field mcpServers.s.timeout: want a time limit above 0 and at most 24h"},
	{"mcpServers.*.tool_timeout", `{"mcpServers": {"s": {"command": "x", "tool_timeout": 1e30}}}`, "field mcpServers.s.tool_timeout: want a time limit above 0 and at most 24h"},
	{"mcpServers.*.tool_timeout", `{"mcpServers": {"s": {"command": "x", "tool_timeout": -5}}}`, "field mcpServers.s.tool_timeout: want a time limit above 0 and at most 24h, got -5s"},
	{"models.*.context_window", `{"models": {"m": {"context_window": 2000000000}}}`, "field models.m.context_window: want a number of tokens from 1 to 10000000, got 2000000000"},
	{"models.*.context_window", `{"models": {"m": {"context_window": 0}}}`, "field models.m.context_window: want a number of tokens from 1 to 10000000, got 0"},
	{"models.*.max_output", `{"models": {"m": {"max_output": 2000000000}}}`, "field models.m.max_output: want a number of tokens from 1 to 10000000, got 2000000000"},
	{"models.*.price.input", `{"models": {"m": {"price": {"input": -1, "output": 1}}}}`, "field models.m.price.input: want US dollars per million tokens from 0 to 10000, got -1"},
	{"models.*.price.input", `{"models": {"m": {"price": {"input": 1e308, "output": 1}}}}`, "field models.m.price.input: want US dollars per million tokens from 0 to 10000, got 1e+308"},
	{"models.*.price.cached_input", `{"models": {"m": {"price": {"input": 1, "cached_input": 1e20, "output": 1}}}}`, "field models.m.price.cached_input: want US dollars per million tokens from 0 to 10000, got 1e+20"},
	{"models.*.price.output", `{"models": {"m": {"price": {"input": 1, "output": -0.01}}}}`, "field models.m.price.output: want US dollars per million tokens from 0 to 10000, got -0.01"},
	{"compact.trigger", `{"compact": {"trigger": 2000000000}}`, "field compact.trigger: want a number of tokens from 1 to 10000000 or a percentage of the budget"},
	{"compact.trigger", `{"compact": {"trigger": "1e3%"}}`, "field compact.trigger:"},
	{"compact.keep_turns", `{"compact": {"keep_turns": 1000000}}`, "field compact.keep_turns: want a number of user turns to keep verbatim from 1 to 1000, got 1000000"},
	{"compact.keep_turns", `{"compact": {"keep_turns": -1}}`, "field compact.keep_turns: want a number of user turns to keep verbatim from 1 to 1000, got -1"},
}

// TestEveryNumberIsRangeChecked: one value out of range per key, each
// refused with an error naming the file, the key and the range.
func TestEveryNumberIsRangeChecked(t *testing.T) {
	for _, tt := range rangeCases {
		t.Run(tt.body, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			_, err := Parse(path, []byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), "config "+path+":") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%s) = %v, want an error naming %s and %q", tt.body, err, path, tt.want)
			}
		})
	}
}

// TestSaneNumbersLoad: every number at a sane value (the ends of each
// range included) loads, after refusals of the same keys.
func TestSaneNumbersLoad(t *testing.T) {
	body := `{"temperature": 2, "context_budget": 10000000, "instructions_share": 100, "ask_timeout": "24h",
  "max_steps": 10000, "max_cost": 0.5, "max_tokens": 1000000000, "max_depth": 8, "max_tool_calls": 1000, "max_answer_bytes": 268435456,
  "tools": {"run_shell": {"timeout": "24h"}},
  "mcpServers": {"s": {"command": "x", "timeout": 86400}},
  "models": {"m": {"context_window": 10000000, "max_output": 1, "price": {"input": 0, "cached_input": 0.1, "output": 10000}}},
  "compact": {"trigger": 10000000, "keep_turns": 1000}}`
	c, err := Parse("sane.json", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if *c.Temperature != 2 || c.MaxSteps != 10000 || time.Duration(c.AskTimeout) != 24*time.Hour || time.Duration(c.MCPServers["s"].Timeout) != 24*time.Hour ||
		c.Models["m"].Price.Output != 10000 || c.Compact.trigger != 10_000_000 {
		t.Errorf("parsed %+v", c)
	}
	if _, err := Parse("low.json", []byte(`{"temperature": 0, "max_cost": 0, "compact": {"trigger": "100%", "keep_turns": 1}}`)); err != nil {
		t.Errorf("the low ends: %v", err)
	}
}

// TestWorkspaceNumbersAreRangeChecked: a folder's .agentty.json and its
// .mcp.json are held to the same ranges, the error naming the file.
func TestWorkspaceNumbersAreRangeChecked(t *testing.T) {
	for file, body := range map[string]string{
		".agentty.json": `{"temperature": 1e308}`,
		".mcp.json":     `{"mcpServers": {"s": {"command": "x", "timeout": 1e30}}}`,
	} {
		ws := t.TempDir()
		os.WriteFile(filepath.Join(ws, file), []byte(body), 0o600)
		_, err := ReadWorkspace(ws, &Settings{})
		if err == nil || !strings.Contains(err.Error(), file+":1: field ") {
			t.Errorf("%s %s: %v; want an error naming the file and the field", file, body, err)
		}
	}
}

// rangeEnd says which end of its range a case of rangeCases passes: "low"
// or "high", from the range and the value its error gives ("want … from LO
// to HI, got V"), or for a time limit ("above 0 and at most 24h") the
// sign of the value.
func rangeEnd(want, body string) string {
	got := regexp.MustCompile(`got (-?[0-9.e+]+)`).FindStringSubmatch(want)
	bounds := regexp.MustCompile(`from (-?[0-9.]+) to ([0-9.]+)`).FindStringSubmatch(want)
	if got != nil && bounds != nil {
		v, _ := strconv.ParseFloat(got[1], 64)
		if lo, _ := strconv.ParseFloat(bounds[1], 64); v < lo {
			return "low"
		}
		return "high"
	}
	if strings.Contains(body, ": -") || strings.Contains(body, `": "-`) || strings.Contains(body, ": 0}") {
		return "low"
	}
	return "high"
}

// TestEveryNumericFieldHasARange: every number of Settings (and the
// structs under it) has a case in rangeCases past each end of its range,
// so a number added later is not taken unchecked, and a bound dropped at
// either end is seen.
func TestEveryNumericFieldHasARange(t *testing.T) {
	var keys []string
	ends := map[string]map[string]bool{}
	for _, tt := range rangeCases {
		keys = append(keys, tt.key)
		if ends[tt.key] == nil {
			ends[tt.key] = map[string]bool{}
		}
		ends[tt.key][rangeEnd(tt.want, tt.body)] = true
	}
	for _, key := range slices.Sorted(maps.Keys(ends)) {
		for _, end := range []string{"low", "high"} {
			if !ends[key][end] && key != "compact.trigger" { // a trigger is text: its cases are in models_test.go
				t.Errorf("%s has no case past its %s end", key, end)
			}
		}
	}
	var walk func(prefix string, ty reflect.Type)
	walk = func(prefix string, ty reflect.Type) {
		for ty.Kind() == reflect.Pointer {
			ty = ty.Elem()
		}
		switch ty.Kind() {
		case reflect.Struct:
			for i := range ty.NumField() {
				f := ty.Field(i)
				tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if f.IsExported() && tag != "-" && tag != "" {
					walk(prefix+tag+".", f.Type)
				}
			}
		case reflect.Map:
			walk(prefix+"*.", ty.Elem())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			if key := strings.TrimSuffix(prefix, "."); !slices.Contains(keys, key) {
				t.Errorf("%s (%s) has no range case", key, ty)
			}
		}
	}
	walk("", reflect.TypeFor[Settings]())
}
