package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/tools"
)

// config is the JSON configuration: the user's file, with what trust allows
// of the workspace's .agentty.json merged over it (see trust.go).
type config struct {
	Model       string   `json:"model,omitempty"`
	BaseURL     string   `json:"base_url,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	AllowShell  *bool    `json:"allow_shell,omitempty"`
	// SystemPrompt replaces agentty's system prompt.
	SystemPrompt string `json:"system_prompt,omitempty"`
	// ContextBudget and MaxSteps are the defaults of --context-budget
	// and --max-steps; MaxDepth bounds delegation between agents
	// (engine.Config.MaxDepth, default 2).
	ContextBudget int `json:"context_budget,omitempty"`
	MaxSteps      int `json:"max_steps,omitempty"`
	MaxDepth      int `json:"max_depth,omitempty"`
	HTTP          struct {
		AllowHosts []string `json:"allow_hosts,omitempty"`
	} `json:"http"`
	// Tools sets policies and timeouts per tool, by name.
	Tools      map[string]toolConfig      `json:"tools,omitempty"`
	MCPServers map[string]tools.MCPServer `json:"mcpServers,omitempty"`
	// ShellEnv names variables of agentty's environment that run_shell
	// commands get, beyond the minimal set (tools.ChildEnv).
	ShellEnv []string `json:"shell_env,omitempty"`
}

type toolConfig struct {
	Policy  engine.Policy `json:"policy,omitempty"`
	Timeout string        `json:"timeout,omitempty"`
	timeout time.Duration
}

// configPath returns the user's config file: $AGENTTY_CONFIG, else
// $XDG_CONFIG_HOME/agentty/config.json, else ~/.config/agentty/config.json.
func configPath(getenv func(string) string) string {
	if p := getenv("AGENTTY_CONFIG"); p != "" {
		return p
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "agentty", "config.json")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".config", "agentty", "config.json")
}

// loadConfig reads the user's config (missing is fine) and the workspace's
// .agentty.json (nil when there is none). The workspace's is not merged:
// what of it takes effect depends on trust (see build).
func loadConfig(getenv func(string) string, workspace string) (*config, *wsConfig, error) {
	c, err := loadUserConfig(getenv)
	if err != nil {
		return nil, nil, err
	}
	ws, err := readWorkspaceConfig(workspace, c)
	if err != nil {
		return nil, nil, err
	}
	return c, ws, nil
}

// maxDepthLimit bounds max_depth: parallel delegation grows the runs with
// the depth exponentially.
const maxDepthLimit = 8

// loadUserConfig reads the person's own config; a missing one is empty.
func loadUserConfig(getenv func(string) string) (*config, error) {
	p := configPath(getenv)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", p, err)
	}
	return parseConfig(p, b)
}

// parseConfig parses one file; its errors name the file, the line and the
// field.
func parseConfig(path string, b []byte) (*config, error) {
	c := &config{}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("config %s:%d: %v", path, lineAt(b, se.Offset), se)
		case errors.As(err, &te):
			return nil, fmt.Errorf("config %s:%d: field %s: expected %s, got %s", path, lineAt(b, te.Offset), te.Field, te.Type, te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return nil, fmt.Errorf("config %s:%d: unknown field %q", path, lineOf(b, `"`+field+`"`), field)
		}
		return nil, fmt.Errorf("config %s: %v", path, err)
	}
	for name, tc := range c.Tools {
		switch tc.Policy {
		case "", engine.PolicyAllow, engine.PolicyAsk, engine.PolicyDeny:
		default:
			return nil, fmt.Errorf("config %s:%d: field tools.%s.policy: %q is not allow, ask or deny", path, lineOf(b, `"`+name+`"`), name, tc.Policy)
		}
		if tc.Timeout != "" {
			d, err := time.ParseDuration(tc.Timeout)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("config %s:%d: field tools.%s.timeout: %q is not a duration such as 30s", path, lineOf(b, `"`+name+`"`), name, tc.Timeout)
			}
			tc.timeout = d
			c.Tools[name] = tc
		}
	}
	if c.MaxDepth < 0 || c.MaxDepth > maxDepthLimit {
		return nil, fmt.Errorf("config %s:%d: field max_depth: want a number from 1 to %d, got %d", path, lineOf(b, `"max_depth"`), maxDepthLimit, c.MaxDepth)
	}
	for name, s := range c.MCPServers {
		if (s.Command == "") == (s.URL == "") {
			return nil, fmt.Errorf("config %s:%d: field mcpServers.%s: give either command (stdio) or url (streamable HTTP)", path, lineOf(b, `"`+name+`"`), name)
		}
	}
	return c, nil
}

func lineAt(b []byte, off int64) int {
	return bytes.Count(b[:min(int(off), len(b))], []byte("\n")) + 1
}

func lineOf(b []byte, s string) int {
	i := bytes.Index(b, []byte(s))
	if i < 0 {
		return 1
	}
	return lineAt(b, int64(i))
}

// merge lays o over c: what o sets wins; maps are merged by key.
func (c *config) merge(o *config) {
	if o.Model != "" {
		c.Model = o.Model
	}
	if o.BaseURL != "" {
		c.BaseURL = o.BaseURL
	}
	if o.Temperature != nil {
		c.Temperature = o.Temperature
	}
	if o.AllowShell != nil {
		c.AllowShell = o.AllowShell
	}
	if o.SystemPrompt != "" {
		c.SystemPrompt = o.SystemPrompt
	}
	if o.ContextBudget > 0 {
		c.ContextBudget = o.ContextBudget
	}
	if o.MaxSteps > 0 {
		c.MaxSteps = o.MaxSteps
	}
	if o.MaxDepth > 0 {
		c.MaxDepth = o.MaxDepth
	}
	if o.HTTP.AllowHosts != nil {
		c.HTTP.AllowHosts = o.HTTP.AllowHosts
	}
	for name, tc := range o.Tools { // field by field: a policy keeps the timeout beneath it
		if c.Tools == nil {
			c.Tools = map[string]toolConfig{}
		}
		base := c.Tools[name]
		if tc.Policy != "" {
			base.Policy = tc.Policy
		}
		if tc.timeout > 0 {
			base.Timeout, base.timeout = tc.Timeout, tc.timeout
		}
		c.Tools[name] = base
	}
	if o.ShellEnv != nil {
		c.ShellEnv = o.ShellEnv
	}
	if len(o.MCPServers) > 0 {
		if c.MCPServers == nil {
			c.MCPServers = map[string]tools.MCPServer{}
		}
		maps.Copy(c.MCPServers, o.MCPServers)
	}
}
