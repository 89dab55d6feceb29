package config

import (
	"fmt"
	"maps"
	pathpkg "path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// The checks of a config file's values beyond their JSON types: every
// number in a range, policies and transports by name, each server with a
// command or a url. A folder's .agentty.json is someone else's file: 1e308
// is not a temperature, and a value agentty would wrap or overflow is
// refused here, naming the file, the line and the key, not met later.

// The ranges of a config's numbers.
const (
	limitTokens    = 10_000_000    // a context window, budget, most output or compaction trigger
	limitRunTokens = 1_000_000_000 // what one run may spend (max_tokens)
	limitSteps     = 10_000
	limitToolCalls = 1_000
	limitDollars   = 10_000 // a run's max_cost; a price per million tokens
	limitKeepTurns = 1_000
	// MaxTimeLimit bounds every time limit a config sets: a tool's
	// timeout, a server's start, a question's wait.
	MaxTimeLimit = 24 * time.Hour
)

// checkNumbers checks the top-level numbers of c (0 is "not set" for all
// but temperature, which is a pointer).
func checkNumbers(path string, b []byte, c *Settings) error {
	nums := []struct {
		key    string
		set    bool
		v      any
		what   string
		lo, hi float64
	}{
		{"temperature", c.Temperature != nil, deref(c.Temperature), "a number", 0, 2},
		{"context_budget", c.ContextBudget != 0, c.ContextBudget, "a number of tokens", 1, limitTokens},
		{"instructions_share", c.InstructionsShare != 0, c.InstructionsShare, "a percentage of the context budget", 1, 100},
		{"max_steps", c.MaxSteps != 0, c.MaxSteps, "a number of steps", 1, limitSteps},
		{"max_cost", c.MaxCost != 0, c.MaxCost, "US dollars", 0, limitDollars},
		{"max_tokens", c.MaxTokens != 0, c.MaxTokens, "a number of tokens", 1, limitRunTokens},
		{"max_depth", c.MaxDepth != 0, c.MaxDepth, "a number", 1, MaxDepthLimit},
		{"max_tool_calls", c.MaxToolCalls != 0, c.MaxToolCalls, "a number of tool calls", 1, limitToolCalls},
		{"max_answer_bytes", c.MaxAnswerBytes != 0, c.MaxAnswerBytes, "a number of bytes", 1 << 10, 1 << 28},
	}
	for _, n := range nums {
		if n.set {
			if err := inRange(path, lineOf(b, `"`+n.key+`"`), n.key, n.what, n.v, n.lo, n.hi); err != nil {
				return err
			}
		}
	}
	if c.AskTimeout != 0 {
		return timeLimit(path, lineOf(b, `"ask_timeout"`), "ask_timeout", time.Duration(c.AskTimeout))
	}
	return nil
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// inRange is nil when v (an int or a float64, as the file gave it) is
// from lo to hi, else the error of key at line of the file path.
func inRange(path string, line int, key, what string, v any, lo, hi float64) error {
	var f float64
	switch n := v.(type) {
	case int:
		f = float64(n)
	case float64:
		f = n
	}
	if f >= lo && f <= hi { // false for NaN
		return nil
	}
	return fmt.Errorf("config %s:%d: field %s: want %s from %s to %s, got %v", path, line, key, what, plain(lo), plain(hi), v)
}

// plain writes a bound as people write it: 10000000, not 1e+07.
func plain(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// timeLimit is nil when d is above 0 and at most MaxTimeLimit, else the
// error of key at line of the file path.
func timeLimit(path string, line int, key string, d time.Duration) error {
	if p := limitProblem(d); p != "" {
		return fmt.Errorf("config %s:%d: field %s: %s", path, line, key, p)
	}
	return nil
}

// limitProblem says what is wrong with d as a time limit ("" when nothing).
func limitProblem(d time.Duration) string {
	if d > 0 && d <= MaxTimeLimit {
		return ""
	}
	return fmt.Sprintf("want a time limit above 0 and at most %s, got %s", shortDuration(MaxTimeLimit), d)
}

// shortDuration is d without zero minutes and seconds: 24h, not 24h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
	}
	return s
}

// checkTools checks the tools key and parses each timeout.
func checkTools(path string, b []byte, c *Settings) error {
	for _, name := range slices.Sorted(maps.Keys(c.Tools)) {
		tc, line := c.Tools[name], lineOf(b, `"`+name+`"`)
		if _, err := pathpkg.Match(name, ""); err != nil {
			return fmt.Errorf("config %s:%d: field tools.%s: not a tool name or pattern: %v", path, line, name, err)
		}
		if !knownPolicy(tc.Policy) {
			return fmt.Errorf("config %s:%d: field tools.%s.policy: %q is not allow, ask or deny", path, line, name, tc.Policy)
		}
		if tc.Timeout == "" {
			continue
		}
		d, err := time.ParseDuration(tc.Timeout)
		if err != nil {
			return fmt.Errorf("config %s:%d: field tools.%s.timeout: %q is not a duration such as 30s", path, line, name, tc.Timeout)
		}
		if err := timeLimit(path, lineAfter(b, `"`+name+`"`, `"timeout"`), "tools."+name+".timeout", d); err != nil {
			return err
		}
		tc.timeout = d
		c.Tools[name] = tc
	}
	return nil
}

func knownPolicy(p engine.Policy) bool {
	switch p {
	case "", engine.PolicyAllow, engine.PolicyAsk, engine.PolicyDeny:
		return true
	}
	return false
}

// checkServers checks the config's mcpServers: their values, and that
// each has a command or a url.
func checkServers(path string, b []byte, c *Settings) error {
	if err := checkMCP(path, b, c.MCPServers); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(c.MCPServers)) {
		if s := c.MCPServers[name]; (s.Command == "") == (s.URL == "") {
			return fmt.Errorf("config %s:%d: field mcpServers.%s: give either command (stdio) or url (streamable HTTP)", path, lineOf(b, `"`+name+`"`), name)
		}
	}
	return nil
}

// checkMCP checks the values of the mcpServers entries of the file path
// (its bytes b, for the line of an entry): a config's or a .mcp.json's.
func checkMCP(path string, b []byte, servers map[string]MCPServer) error {
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		if field, problem := servers[name].check(); problem != "" {
			line := lineOf(b, `"`+name+`"`)
			if field == "timeout" {
				line = lineAfter(b, `"`+name+`"`, `"timeout"`)
			}
			return fmt.Errorf("config %s:%d: field mcpServers.%s.%s: %s", path, line, name, field, problem)
		}
	}
	return nil
}

// check says which field of the server is wrong, and how ("" when none
// is): its policy, its type, its timeout.
func (m MCPServer) check() (field, problem string) {
	switch {
	case !knownPolicy(m.Policy):
		return "policy", fmt.Sprintf("%q is not allow, ask or deny", m.Policy)
	case !slices.Contains([]string{"", "stdio", "http", "streamable-http", "sse"}, m.Type):
		return "type", fmt.Sprintf("%q is not stdio, http or sse", m.Type)
	case m.Timeout != 0 && limitProblem(time.Duration(m.Timeout)) != "":
		return "timeout", limitProblem(time.Duration(m.Timeout))
	case m.ToolTimeout != 0:
		return "tool_timeout", limitProblem(time.Duration(m.ToolTimeout))
	}
	return "", ""
}

// checkModels validates the models key: numbers in range, and room for
// input in the window (max_output less than context_window).
func checkModels(path string, b []byte, c *Settings) error {
	for _, name := range slices.Sorted(maps.Keys(c.Models)) {
		mc := c.Models[name]
		at := func(f string) int { return lineAfter(b, `"`+name+`"`, `"`+f+`"`) }
		for _, f := range []struct {
			key string
			n   *int
		}{{"context_window", mc.ContextWindow}, {"max_output", mc.MaxOutput}} {
			if f.n != nil {
				if err := inRange(path, at(f.key), "models."+name+"."+f.key, "a number of tokens", *f.n, 1, limitTokens); err != nil {
					return err
				}
			}
		}
		if p := mc.Price; p != nil {
			for _, f := range []struct {
				key string
				v   float64
			}{{"input", p.Input}, {"cached_input", p.CachedInput}, {"output", p.Output}} {
				if err := inRange(path, at(f.key), "models."+name+".price."+f.key, "US dollars per million tokens", f.v, 0, limitDollars); err != nil {
					return err
				}
			}
		}
		switch {
		case mc.ContextWindow == nil && mc.MaxOutput == nil && mc.Price == nil:
			return fmt.Errorf("config %s:%d: field models.%s: give context_window (and max_output), in tokens, or price", path, lineAfter(b, `"models"`, `"`+name+`"`), name)
		case mc.ContextWindow != nil && mc.MaxOutput != nil && *mc.MaxOutput >= *mc.ContextWindow:
			return fmt.Errorf("config %s:%d: field models.%s.max_output: %d leaves no room for input in the context window of %d; want less than context_window", path, at("max_output"), name, *mc.MaxOutput, *mc.ContextWindow)
		}
	}
	return nil
}

// checkCompact validates the compact key and parses its trigger.
func checkCompact(path string, b []byte, c *Settings) error {
	cc := &c.Compact
	if cc.Trigger != nil {
		var err error
		if cc.trigger, cc.triggerPct, err = ParseTrigger(cc.Trigger); err != nil {
			return fmt.Errorf("config %s:%d: field compact.trigger: %v", path, lineAfter(b, `"compact"`, `"trigger"`), err)
		}
	}
	if cc.KeepTurns != nil {
		return inRange(path, lineAfter(b, `"compact"`, `"keep_turns"`), "compact.keep_turns", "a number of user turns to keep verbatim", *cc.KeepTurns, 1, limitKeepTurns)
	}
	return nil
}
