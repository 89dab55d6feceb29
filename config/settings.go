package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	pathpkg "path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// Settings is the JSON configuration: the user's file, with what trust
// allows of the workspace's .agentty.json merged over it (see trust.go).
type Settings struct {
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
	// InstructionsShare is the most of the context budget the project
	// instructions may take, in percent (default 25).
	InstructionsShare int `json:"instructions_share,omitempty"`
	// AskTimeout bounds the wait for the person's answer to ask_user
	// (seconds, or a duration; none by default).
	AskTimeout Seconds `json:"ask_timeout,omitempty"`
	MaxSteps   int     `json:"max_steps,omitempty"`
	// MaxCost (US dollars) and MaxTokens bound what one run spends
	// (--max-cost, --max-tokens win over them).
	MaxCost   float64 `json:"max_cost,omitempty"`
	MaxTokens int     `json:"max_tokens,omitempty"`
	MaxDepth  int     `json:"max_depth,omitempty"`
	// MaxToolCalls caps the tool calls run of one decision
	// (engine.Config.MaxCalls, default 64).
	MaxToolCalls int `json:"max_tool_calls,omitempty"`
	// Checkpoints, false, turns off the workspace's checkpoints before
	// steps that may change it (docs/checkpoints.md). A workspace's own
	// config may turn them off only when the folder is trusted: they
	// protect the person.
	Checkpoints *bool `json:"checkpoints,omitempty"`
	// MaxAnswerBytes caps one answer of a model (openai.Config's, 4 MiB
	// by default): text, reasoning and tool calls' arguments together.
	MaxAnswerBytes int `json:"max_answer_bytes,omitempty"`
	HTTP           struct {
		AllowHosts []string `json:"allow_hosts,omitempty"`
	} `json:"http"`
	// Tools sets policies and timeouts per tool, by name.
	Tools      map[string]ToolConfig `json:"tools,omitempty"`
	MCPServers map[string]MCPServer  `json:"mcpServers,omitempty"`
	// ShellEnv names variables of agentty's environment that run_shell
	// commands get, beyond the minimal set (tools.ChildEnv).
	ShellEnv []string `json:"shell_env,omitempty"`
	// Models gives models' context windows and most output by name
	// (models.go); Compact sets compaction.
	Models  map[string]ModelConfig `json:"models,omitempty"`
	Compact CompactConfig          `json:"compact"`
	// EmbeddingModel, when set, gives the search index vectors from this
	// model on the same OpenAI-compatible server (search_cmd.go).
	EmbeddingModel string `json:"embedding_model,omitempty"`
	// Hooks are programs run at points of a run, in Claude Code's shape
	// (package hooks reads them; docs/hooks.md). A workspace's are
	// risky: they run only in a trusted folder.
	Hooks json.RawMessage `json:"hooks,omitempty"`
	// Notes say what of the file agentty does not use as written: keys of
	// an mcpServers entry it does not read (entries are pasted from other
	// MCP clients, whose keys are theirs), each naming its line.
	Notes []string `json:"-"`
}

// Tool returns the settings of the tool called name, field by field
// from the most specific entry that sets the field: its own entry, then the
// patterns that match it ("fs__*": every tool of the MCP server fs), the
// longest first.
func (c *Settings) Tool(name string) (ToolConfig, bool) {
	var entries []string
	for pat := range c.Tools {
		if ok, _ := pathpkg.Match(pat, name); ok || pat == name {
			entries = append(entries, pat)
		}
	}
	slices.SortFunc(entries, func(a, b string) int {
		switch {
		case a == name:
			return -1
		case b == name:
			return 1
		}
		return cmp.Or(cmp.Compare(len(b), len(a)), cmp.Compare(a, b))
	})
	var out ToolConfig
	for _, e := range entries {
		tc := c.Tools[e]
		if out.Policy == "" {
			out.Policy = tc.Policy
		}
		if out.timeout == 0 {
			out.Timeout, out.timeout = tc.Timeout, tc.timeout
		}
	}
	return out, len(entries) > 0
}

// MCPServer is one server of the mcpServers key, in the shape other MCP
// clients use (Claude Code's .mcp.json, Cursor's, Cline's): a command to
// start (stdio), or a URL (streamable HTTP; type sse for the older SSE
// transport). ${VAR} and ${VAR:-default} in command, args, env, url and
// headers are expanded from agentty's environment when the server starts
// (Expand). The setup converts it to tools.MCPServer: the settings do not
// depend on the adapter.
type MCPServer struct {
	// Type is stdio, http (or streamable-http) or sse; "" is stdio with a
	// command, http with a url.
	Type string `json:"type,omitempty"`
	// Disabled leaves the server out.
	Disabled bool `json:"disabled,omitempty"`
	// Timeout bounds the server's start (a call, three times it): a
	// number of seconds or a duration ("45s").
	Timeout Seconds  `json:"timeout,omitempty"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is set in a stdio server's environment, over a minimal one: a
	// server sees an API key only when Env passes it.
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Policy, when set, is the policy of every tool of the server.
	Policy engine.Policy `json:"policy,omitempty"`
	// Cwd is the folder a stdio server starts in (relative: to the
	// workspace; "": the workspace).
	Cwd string `json:"cwd,omitempty"`
	// EnabledTools, when set, are the only tools of the server offered
	// (by the server's names); DisabledTools are never offered.
	EnabledTools  []string `json:"enabled_tools,omitempty"`
	DisabledTools []string `json:"disabled_tools,omitempty"`
	// ToolTimeout bounds one call of the server's tools (default: three
	// times Timeout).
	ToolTimeout Seconds `json:"tool_timeout,omitempty"`
	// AlwaysAllow are tools allowed without asking (Claude Code's key):
	// a workspace's takes effect only when the folder is trusted, as all
	// of its servers do.
	AlwaysAllow []string `json:"alwaysAllow,omitempty"`
	// HeadersHelper is a shell command whose output, a JSON object of
	// strings, adds headers to an HTTP server's (Claude Code's key): a
	// program, run as the server would be, only under trust.
	HeadersHelper string `json:"headersHelper,omitempty"`
}

// mcpServerKeys are the keys of an mcpServers entry agentty reads (JSON's
// names).
var mcpServerKeys = []string{"type", "disabled", "timeout", "command", "args", "env", "url", "headers", "policy",
	"cwd", "enabled_tools", "disabled_tools", "tool_timeout", "alwaysAllow", "headersHelper"}

// ToolConfig is a tool's entry of the config's tools: its policy and
// timeout.
type ToolConfig struct {
	Policy  engine.Policy `json:"policy,omitempty"`
	Timeout string        `json:"timeout,omitempty"`
	timeout time.Duration
}

// TimeLimit is Timeout parsed (0: none set).
func (t ToolConfig) TimeLimit() time.Duration { return t.timeout }

// Load reads the user's config (missing is fine) and the workspace's
// .agentty.json (nil when there is none). The workspace's is not merged:
// what of it takes effect depends on trust (see build).
func Load(getenv func(string) string, workspace string) (*Settings, *Workspace, error) {
	c, err := LoadUser(getenv)
	if err != nil {
		return nil, nil, err
	}
	ws, err := ReadWorkspace(workspace, c)
	if err != nil {
		return nil, nil, err
	}
	return c, ws, nil
}

// MaxDepthLimit bounds max_depth: parallel delegation grows the runs with
// the depth exponentially.
const MaxDepthLimit = 8

// LoadUser reads the person's own config; a missing one is empty.
func LoadUser(getenv func(string) string) (*Settings, error) {
	p := Path(getenv)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &Settings{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", p, err)
	}
	return Parse(p, b)
}

// Parse parses one file; its errors name the file, the line and the
// field.
func Parse(path string, b []byte) (*Settings, error) {
	// mcpServers are read apart: an entry's keys that agentty does not
	// read are notes, not errors, as in a .mcp.json; every other key of
	// the file is known or refused.
	var f struct {
		Settings
		MCPServers map[string]json.RawMessage `json:"mcpServers,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("config %s:%d: %v", path, lineAt(b, se.Offset), se)
		case errors.As(err, &te):
			field := strings.TrimPrefix(te.Field, "Settings.") // the struct Parse decodes embeds Settings
			return nil, fmt.Errorf("config %s:%d: field %s: expected %s, got %s", path, lineAt(b, te.Offset), field, te.Type, te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return nil, fmt.Errorf("config %s:%d: unknown field %q", path, lineOf(b, `"`+field+`"`), field)
		}
		return nil, fmt.Errorf("config %s: %v", path, err)
	}
	// One JSON value and nothing after it: the trust hash (trust.go) runs
	// the folder's files one after another, and bytes after the JSON could
	// spell the next file's part of it.
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("config %s:%d: more after the JSON object; want one object only", path, lineAt(b, dec.InputOffset()))
	}
	c := &f.Settings
	servers, err := parseServers(path, b, f.MCPServers)
	if err != nil {
		return nil, err
	}
	c.MCPServers, c.Notes = servers, mcpEntryNotes(path, b)
	for _, check := range []func(string, []byte, *Settings) error{checkTools, checkServers, checkNumbers, checkModels, checkCompact} {
		if err := check(path, b, c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// parseServers decodes the mcpServers entries of the file path (its bytes
// b), each leniently: a key agentty does not read is left to a note.
func parseServers(path string, b []byte, raw map[string]json.RawMessage) (map[string]MCPServer, error) {
	if raw == nil {
		return nil, nil
	}
	servers := make(map[string]MCPServer, len(raw))
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		var s MCPServer
		if err := json.Unmarshal(raw[name], &s); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return nil, fmt.Errorf("config %s:%d: field mcpServers.%s.%s: expected %s, got %s", path, lineAfter(b, `"`+name+`"`, `"`+te.Field+`"`), name, te.Field, te.Type, te.Value)
			}
			return nil, fmt.Errorf("config %s:%d: field mcpServers.%s: %v", path, lineOf(b, `"`+name+`"`), name, err)
		}
		servers[name] = s
	}
	return servers, nil
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

// lineAfter is the line of s after the first after (the line of after when
// s does not follow it): a nested field's line.
func lineAfter(b []byte, after, s string) int {
	i := bytes.Index(b, []byte(after))
	if i < 0 {
		return lineOf(b, s)
	}
	j := bytes.Index(b[i:], []byte(s))
	if j < 0 {
		return lineAt(b, int64(i))
	}
	return lineAt(b, int64(i+j))
}

// positive is n when it is set (above zero), else the value it would
// replace.
func positive(n, old int) int {
	if n > 0 {
		return n
	}
	return old
}

// Merge lays o over c: what o sets wins; maps are merged by key.
func (c *Settings) Merge(o *Settings) {
	c.Model, c.BaseURL = cmp.Or(o.Model, c.Model), cmp.Or(o.BaseURL, c.BaseURL)
	over(&c.Temperature, o.Temperature)
	over(&c.AllowShell, o.AllowShell)
	over(&c.Checkpoints, o.Checkpoints)
	if o.SystemPrompt != "" {
		c.SystemPrompt = o.SystemPrompt
	}
	c.ContextBudget, c.MaxSteps = positive(o.ContextBudget, c.ContextBudget), positive(o.MaxSteps, c.MaxSteps)
	c.MaxTokens = positive(o.MaxTokens, c.MaxTokens)
	c.MaxAnswerBytes = positive(o.MaxAnswerBytes, c.MaxAnswerBytes)
	if o.MaxCost > 0 {
		c.MaxCost = o.MaxCost
	}
	c.InstructionsShare = positive(o.InstructionsShare, c.InstructionsShare)
	if o.AskTimeout > 0 {
		c.AskTimeout = o.AskTimeout
	}
	c.MaxToolCalls, c.MaxDepth = positive(o.MaxToolCalls, c.MaxToolCalls), positive(o.MaxDepth, c.MaxDepth)
	if o.HTTP.AllowHosts != nil {
		c.HTTP.AllowHosts = o.HTTP.AllowHosts
	}
	if o.EmbeddingModel != "" {
		c.EmbeddingModel = o.EmbeddingModel
	}
	for name, tc := range o.Tools { // field by field: a policy keeps the timeout beneath it
		if c.Tools == nil {
			c.Tools = map[string]ToolConfig{}
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
			c.MCPServers = map[string]MCPServer{}
		}
		maps.Copy(c.MCPServers, o.MCPServers)
	}
	for name, mc := range o.Models { // field by field, as tools
		if c.Models == nil {
			c.Models = map[string]ModelConfig{}
		}
		base := c.Models[name]
		if mc.ContextWindow != nil {
			base.ContextWindow = mc.ContextWindow
		}
		if mc.MaxOutput != nil {
			base.MaxOutput = mc.MaxOutput
		}
		if mc.Price != nil {
			base.Price = mc.Price
		}
		c.Models[name] = base
	}
	if o.Compact.Auto != nil {
		c.Compact.Auto = o.Compact.Auto
	}
	if o.Compact.Trigger != nil {
		c.Compact.Trigger, c.Compact.trigger, c.Compact.triggerPct = o.Compact.Trigger, o.Compact.trigger, o.Compact.triggerPct
	}
	if o.Compact.KeepTurns != nil {
		c.Compact.KeepTurns = o.Compact.KeepTurns
	}
	if o.Compact.Model != "" {
		c.Compact.Model = o.Compact.Model
	}
}

// Seconds is a time limit in a config file: a number of seconds, or a
// duration string ("45s", "2m").
type Seconds time.Duration

// UnmarshalJSON reads a number of seconds or a duration string; its range
// is checked with the key it is the value of (checkNumbers, checkMCP).
func (s *Seconds) UnmarshalJSON(b []byte) error {
	var n float64
	if err := json.Unmarshal(b, &n); err == nil {
		// Saturated, never wrapped: 1e30 seconds is the longest
		// duration, which the range check (check.go) refuses by name.
		switch d := n * float64(time.Second); {
		case d >= math.MaxInt64:
			*s = Seconds(math.MaxInt64)
		case d <= math.MinInt64:
			*s = Seconds(math.MinInt64)
		default:
			*s = Seconds(d)
		}
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return fmt.Errorf("want a number of seconds or a duration such as \"45s\", got %s", b)
	}
	d, err := time.ParseDuration(str)
	if err != nil {
		return fmt.Errorf("want a number of seconds or a duration such as \"45s\", got %q", str)
	}
	*s = Seconds(d)
	return nil
}

// MarshalJSON writes the limit as a duration string.
func (s Seconds) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(s).String()) }

// envRef is ${VAR} or ${VAR:-default}.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// Expand replaces ${VAR} in s with VAR's value in getenv, and
// ${VAR:-default} with it or, when it is unset or empty, default; as
// Claude Code does in .mcp.json. Nothing else in s changes. unset is
// called with each VAR that is unset or empty and has no default.
func Expand(s string, getenv func(string) string, unset func(string)) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return envRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := envRef.FindStringSubmatch(ref)
		if v := getenv(m[1]); v != "" {
			return v
		}
		if !strings.Contains(ref, ":-") && unset != nil {
			unset(m[1])
		}
		return m[2]
	})
}

// Expanded is the entry with ${VAR} expanded in its command, args, env,
// url and headers, and the variables it names that are not set (and have
// no default): they are left empty.
func (m MCPServer) Expanded(getenv func(string) string) (MCPServer, []string) {
	var unset []string
	note := func(v string) {
		if !slices.Contains(unset, v) {
			unset = append(unset, v)
		}
	}
	m.Command, m.URL, m.Cwd = Expand(m.Command, getenv, note), Expand(m.URL, getenv, note), Expand(m.Cwd, getenv, note)
	m.Args = slices.Clone(m.Args)
	for i, a := range m.Args {
		m.Args[i] = Expand(a, getenv, note)
	}
	expandAll := func(kv map[string]string) map[string]string {
		if kv == nil {
			return nil
		}
		out := make(map[string]string, len(kv))
		for k, v := range kv {
			out[k] = Expand(v, getenv, note)
		}
		return out
	}
	m.Env, m.Headers = expandAll(m.Env), expandAll(m.Headers)
	return m, unset
}

// over sets *dst to src when src says something (is not nil).
func over[T any](dst **T, src *T) {
	if src != nil {
		*dst = src
	}
}
