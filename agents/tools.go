package agents

// An agent's tools (its patterns resolved against the session's) and the
// agents made into the engine's, with the trust of the workspace.

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
)

// optionalTools are agentty's tools a session has only when the person
// allows them, and how.
var optionalTools = map[string]string{
	"run_shell": "needs --allow-shell (or allow_shell in the config)",
	"http_get":  "needs http.allow_hosts in the config",
	"skill":     "is offered only when there are skills (none were found here)",
}

// companions are the tools a tool word brings with it: Claude Code's
// Skill is agentty's skill, whose files read_skill_file reads.
var companions = map[string]string{"skill": "read_skill_file"}

// ResolveTools resolves def's tool patterns against names, the session's
// tools in order: the names of the tools the agent may use (nil: all of
// them), notes, and an error for a pattern that matches no tool. A pattern
// may also match nothing without an error when it names the engine's own
// tools (agent, transfer_to_*: offered by the engine), a tool of an MCP
// server that is configured (mcp, the servers' names) but did not list it
// now, a tool of agentty's the session does not offer (run_shell without
// --allow-shell), or a Claude Code tool agentty does not have (a
// capitalised word, any word of Claude Code's comma-separated string, any
// word of a .claude/agents file): each is noted, in the words the file
// used. A YAML list of agentty's names is checked: a typo is an error.
func (def *Def) ResolveTools(names []string, mcp map[string]bool) ([]string, []Problem, *Problem) {
	var notes []Problem
	note := func(format string, a ...any) {
		notes = append(notes, Problem{File: def.File, Line: def.ToolsLine, Field: "tools", Message: fmt.Sprintf(format, a...)})
	}
	if def.Tools == nil {
		if len(def.Deny) == 0 {
			return nil, nil, nil // every tool, as the session's change
		}
		return def.filter(names, nil), nil, nil
	}
	want := map[string]bool{}
	for _, word := range def.Tools {
		p := config.ClaudeToolGlob(word)
		n := 0
		for _, name := range names {
			if ok, _ := path.Match(p, name); ok || name == companions[p] && companions[p] != "" {
				want[name] = true
				n++
			}
		}
		if n > 0 {
			continue
		}
		server, _, isMCP := strings.Cut(p, "__")
		as := word
		if p != word {
			as = word + " (" + p + ")"
		}
		switch {
		case p == engine.AgentTool:
			// Named: the agent may delegate (Def.Delegates); the engine offers it.
		case strings.HasPrefix(p, engine.TransferPrefix):
			note("%s is the engine's own: it is offered by the agents' modes, not by this list", p)
		case isMCP && mcp[server]:
			note("%s matches no tool of the MCP server %s now (did it start?)", as, server)
		case isMCP && strings.HasPrefix(word, "mcp__"):
			note("%s: no MCP server %s is configured; left out", word, server)
		case optionalTools[p] != "":
			note("%s %s; left out", as, optionalTools[p])
		case def.claude || def.claudeTools || unicode.IsUpper([]rune(word)[0]):
			note("%s: agentty has no such tool; left out", word)
		default:
			return nil, notes, &Problem{File: def.File, Line: def.ToolsLine, Field: "tools",
				Message: fmt.Sprintf("%q matches no tool (agentty tools lists them)", p)}
		}
	}
	return def.filter(names, want), notes, nil
}

// patterns are the globs of an agent file's tool words (toolGlob).
func (def *Def) patterns(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		g := config.ClaudeToolGlob(p)
		out = append(out, g)
		if c := companions[g]; c != "" {
			out = append(out, c)
		}
	}
	return out
}

// filter keeps the names in want (nil: all), less those Deny matches, in
// names' order.
func (def *Def) filter(names []string, want map[string]bool) []string {
	deny := def.patterns(def.Deny)
	out := []string{}
	for _, name := range names {
		if want != nil && !want[name] {
			continue
		}
		if slices.ContainsFunc(deny, func(p string) bool { ok, _ := path.Match(p, name); return ok }) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// allows reports whether the agent may use the tool called name: the
// patterns of its file, as the MCP servers' tools come and go.
func (def *Def) allows(name string) bool {
	if def.Tools != nil && !slices.ContainsFunc(def.patterns(def.Tools), func(p string) bool { ok, _ := path.Match(p, name); return ok }) {
		return false
	}
	return !slices.ContainsFunc(def.patterns(def.Deny), func(p string) bool { ok, _ := path.Match(p, name); return ok })
}

// Row describes an agent for `agentty agents`.
type Row struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Mode        string `json:"mode"`
	Model       string `json:"model"`
	// Tools are the names of the agent's tools; null: every tool the
	// session has.
	Tools    []string `json:"tools"`
	MaxSteps int      `json:"max_steps,omitempty"`
	// OutputSchema and Guardrails are the agent's, when it has them.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Guardrails   *GuardRows      `json:"guardrails,omitempty"`
	Source       string          `json:"source"`
	Scope        string          `json:"scope"`
}

// GuardRows are an agent's guardrails as agents --json lists them.
type GuardRows struct {
	Input  []GuardRow `json:"input,omitempty"`
	Output []GuardRow `json:"output,omitempty"`
}

// GuardRow is one guardrail: its name, and its pattern or judging agent.
type GuardRow struct {
	Name    string `json:"name"`
	Pattern string `json:"pattern,omitempty"`
	Agent   string `json:"agent,omitempty"`
}

// Rows are g as agents --json lists them; nil for none.
func Rows(g engine.Guardrails) *GuardRows {
	if len(g.Input)+len(g.Output) == 0 {
		return nil
	}
	row := func(gs []engine.Guardrail) []GuardRow {
		var out []GuardRow
		for _, x := range gs {
			r := GuardRow{Name: x.Name, Agent: x.Agent}
			if x.Pattern != nil {
				r.Pattern = x.Pattern.String()
			}
			out = append(out, r)
		}
		return out
	}
	return &GuardRows{Input: row(g.Input), Output: row(g.Output)}
}

// Set is a setup's agents: what `agentty agents` lists, and the
// registries of the agents that have tools of their own.
type Set struct {
	Rows   []Row
	Errors []Problem // files that did not load, agents that could not be wired
	Notes  []Problem
	// mu guards regs, which an MCP server's changed tool list refreshes
	// from another goroutine.
	mu   sync.Mutex
	regs []agentReg
}

// Track keeps reg, the registry of def's agent, to be refreshed when the
// session's tools change.
func (a *Set) Track(def *Def, reg *engine.Registry) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.regs = append(a.regs, agentReg{def: def, reg: reg})
}

// agentReg is an agent's own registry and the file that says what it holds.
type agentReg struct {
	def *Def
	reg *engine.Registry
}

// Refresh gives each agent with tools of its own those of ts it allows:
// the session's tools changed (an MCP server's list).
func (a *Set) Refresh(ts []engine.Tool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.regs {
		r.reg.Replace(Allowed(ts, r.def)...)
	}
}

// Allowed is the tools of ts that def allows, in order.
func Allowed(ts []engine.Tool, def *Def) []engine.Tool {
	var out []engine.Tool
	for _, t := range ts {
		if def.allows(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// Summary is the one line a run says of the agent files (files of them
// read): how many notes and failures, whether the untrusted workspace's
// files were refused something (untrusted), and where to see them.
func (a *Set) Summary(files int, untrusted, lister string) string {
	s := fmt.Sprintf("%d agent %s: ", files, engine.Plural(files, "file"))
	if n := len(a.Errors); n > 0 {
		s += fmt.Sprintf("%d not loaded, ", n)
	}
	s += fmt.Sprintf("%d %s", len(a.Notes), engine.Plural(len(a.Notes), "note"))
	if untrusted != "" && slices.ContainsFunc(a.Notes, func(p Problem) bool { return strings.HasPrefix(p.Message, "refused") }) {
		s += " (some refused: the workspace is not trusted; agentty trust " + untrusted + ")"
	}
	return s + "; " + lister + " lists them"
}

// unknownAgent is the error of --agent naming no agent: the agents there
// are, and the file of that name that failed, if one did.
func (a *Set) UnknownAgent(name string) error {
	for _, p := range a.Errors {
		if filepath.Base(p.File) == name+".md" {
			return fmt.Errorf("--agent %s: its file did not load: %s", name, p)
		}
	}
	if len(a.Rows) == 0 {
		return fmt.Errorf("--agent %s: no agents are defined (put them in .agentty/agents/NAME.md; see agentty agents)", name)
	}
	var names []string
	for _, r := range a.Rows {
		names = append(names, r.Name)
	}
	return fmt.Errorf("--agent %s: no such agent; the agents are %s (agentty agents lists them)", name, strings.Join(names, ", "))
}

// Delegates says whether the agent may delegate: it lists no tools (it has
// the session's, the tool agent among them), or its list names agent (or
// a glob that matches it), and disallowed_tools does not take it away. A
// list without it is the agent's whole list.
func (def *Def) Delegates() bool {
	return def.allows(engine.AgentTool)
}
