package main

// An agent's tools (its patterns resolved against the session's) and the
// agents made into the engine's, with the trust of the workspace.

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentty/agentty/engine"
)

// claudeTools maps Claude Code's tool names to agentty's, for
// .claude/agents files.
var claudeTools = map[string]string{
	"Read":      "read_file",
	"Write":     "write_file",
	"Edit":      "edit_file",
	"MultiEdit": "edit_file",
	"Grep":      "search_files",
	"Glob":      "search_files",
	"LS":        "list_dir",
	"Bash":      "run_shell",
	"WebFetch":  "http_get",
}

// agentTools resolves def's tool patterns against names, the session's
// tools in order: the names of the tools the agent may use (nil: all of
// them), notes, and an error for a pattern that matches no tool. A pattern
// may also match nothing without an error when it names the engine's own
// tools (agent, transfer_to_*: offered by the engine), a tool of an MCP
// server that is configured (mcp, the servers' names) but did not list it
// now, or, in a .claude file, a Claude Code tool agentty does not have.
func (def *agentDef) agentTools(names []string, mcp map[string]bool) ([]string, []agentProblem, *agentProblem) {
	var notes []agentProblem
	note := func(format string, a ...any) {
		notes = append(notes, agentProblem{File: def.File, Line: def.toolsLine, Field: "tools", Message: fmt.Sprintf(format, a...)})
	}
	if def.Tools == nil {
		if len(def.Deny) == 0 {
			return nil, nil, nil // every tool, as the session's change
		}
		return def.filter(names, nil), nil, nil
	}
	want := map[string]bool{}
	for _, p := range def.patterns(def.Tools) {
		n := 0
		for _, name := range names {
			if ok, _ := path.Match(p, name); ok {
				want[name] = true
				n++
			}
		}
		if n > 0 {
			continue
		}
		server, _, isMCP := strings.Cut(p, "__")
		switch {
		case p == engine.AgentTool || strings.HasPrefix(p, engine.TransferPrefix):
			note("%s is the engine's own: it is offered by max_depth and the agents' modes, not by this list", p)
		case isMCP && mcp[server]:
			note("%s matches no tool of the MCP server %s now (did it start?)", p, server)
		case def.claude:
			note("%s: agentty has no such tool; left out", p)
		default:
			return nil, notes, &agentProblem{File: def.File, Line: def.toolsLine, Field: "tools",
				Message: fmt.Sprintf("%q matches no tool (agentty tools lists them)", p)}
		}
	}
	return def.filter(names, want), notes, nil
}

// patterns maps Claude Code's tool names (Read, mcp__server__tool) to
// agentty's in a .claude file; other files' patterns are as written.
func (def *agentDef) patterns(ps []string) []string {
	if !def.claude {
		return ps
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		if to, ok := claudeTools[p]; ok {
			p = to
		} else if rest, ok := strings.CutPrefix(p, "mcp__"); ok {
			p = rest
		}
		out[i] = p
	}
	return out
}

// filter keeps the names in want (nil: all), less those Deny matches, in
// names' order.
func (def *agentDef) filter(names []string, want map[string]bool) []string {
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
func (def *agentDef) allows(name string) bool {
	if def.Tools != nil && !slices.ContainsFunc(def.patterns(def.Tools), func(p string) bool { ok, _ := path.Match(p, name); return ok }) {
		return false
	}
	return !slices.ContainsFunc(def.patterns(def.Deny), func(p string) bool { ok, _ := path.Match(p, name); return ok })
}

// agentRow describes an agent for `agentty agents`.
type agentRow struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Mode        string `json:"mode"`
	Model       string `json:"model"`
	// Tools are the names of the agent's tools; null: every tool the
	// session has.
	Tools    []string `json:"tools"`
	MaxSteps int      `json:"max_steps,omitempty"`
	Source   string   `json:"source"`
	Scope    string   `json:"scope"`
}

// agentSet is a setup's agents: what `agentty agents` lists, and the
// registries of the agents that have tools of their own.
type agentSet struct {
	rows   []agentRow
	errors []agentProblem // files that did not load, agents that could not be wired
	notes  []agentProblem
	// mu guards regs, which an MCP server's changed tool list refreshes
	// from another goroutine.
	mu   sync.Mutex
	regs []agentReg
}

// agentReg is an agent's own registry and the file that says what it holds.
type agentReg struct {
	def *agentDef
	reg *engine.Registry
}

// refresh gives each agent with tools of its own those of ts it allows:
// the session's tools changed (an MCP server's list).
func (a *agentSet) refresh(ts []engine.Tool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.regs {
		r.reg.Replace(allowed(ts, r.def)...)
	}
}

// allowed is the tools of ts that def allows, in order.
func allowed(ts []engine.Tool, def *agentDef) []engine.Tool {
	var out []engine.Tool
	for _, t := range ts {
		if def.allows(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// loadAgents reads the agent files of the workspace and the user and makes
// the engine's agents of them, their tools a subset of the setup's registry
// (which must be filled). Files that fail are in st.agents.errors, and with
// the notes in st.notices; only --agent naming no agent is an error.
func (st *setup) loadAgents(o options, cfg *config, wsDir string, ws *wsConfig, getenv func(string) string) ([]engine.Agent, error) {
	wsAbs, err := filepath.Abs(wsDir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", wsDir, err)
	}
	if real, err := filepath.EvalSymlinks(wsAbs); err == nil {
		wsAbs = real
	}
	trusted, err := workspaceTrusted(o, wsAbs, ws, getenv)
	if err != nil {
		return nil, err
	}
	files := loadAgents(agentPlaces(wsDir, wsAbs, trusted, getenv))
	a := &st.agents
	a.errors, a.notes = files.Errors, files.Notes
	mcp := map[string]bool{}
	for name := range cfg.MCPServers {
		mcp[name] = true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	top := st.registry.Tools()
	names := st.registry.Names()
	var out []engine.Agent
	for i := range files.Defs {
		def := &files.Defs[i]
		toolNames, notes, prob := def.agentTools(names, mcp)
		a.notes = append(a.notes, notes...)
		if prob != nil {
			a.errors = append(a.errors, *prob)
			continue
		}
		ea := engine.Agent{Name: def.Name, Description: def.Description, System: def.System,
			MaxSteps: def.MaxSteps, Handoff: def.Mode == agentHandoff}
		if def.Model != modelInherit {
			mo := o
			mo.model = def.Model
			if ea.Model, ea.ModelName, err = pickModel(mo, cfg, getenv); err != nil {
				a.errors = append(a.errors, agentProblem{File: def.File, Line: def.modelLine, Field: "model", Message: err.Error()})
				continue
			}
		}
		if toolNames != nil {
			if ea.Tools, err = engine.NewRegistry(allowed(top, def)...); err != nil {
				a.errors = append(a.errors, agentProblem{File: def.File, Line: def.toolsLine, Field: "tools", Message: err.Error()})
				continue
			}
			a.regs = append(a.regs, agentReg{def: def, reg: ea.Tools})
		}
		out = append(out, ea)
		a.rows = append(a.rows, agentRow{Name: def.Name, Description: def.Description, Mode: def.Mode, Model: def.Model,
			Tools: toolNames, MaxSteps: def.MaxSteps, Source: def.File, Scope: def.Scope})
	}
	for _, p := range a.errors {
		st.notices = append(st.notices, p.String()+" (the agent is not loaded)")
	}
	for _, p := range a.notes {
		st.notices = append(st.notices, p.String())
	}
	if o.agent != "" && !slices.ContainsFunc(out, func(ea engine.Agent) bool { return ea.Name == o.agent }) {
		return nil, errUsage{a.unknownAgent(o.agent)}
	}
	return out, nil
}

// unknownAgent is the error of --agent naming no agent: the agents there
// are, and the file of that name that failed, if one did.
func (a *agentSet) unknownAgent(name string) error {
	for _, p := range a.errors {
		if filepath.Base(p.File) == name+".md" {
			return fmt.Errorf("--agent %s: its file did not load: %s", name, p)
		}
	}
	if len(a.rows) == 0 {
		return fmt.Errorf("--agent %s: no agents are defined (put them in .agentty/agents/NAME.md; see agentty agents)", name)
	}
	var names []string
	for _, r := range a.rows {
		names = append(names, r.Name)
	}
	return fmt.Errorf("--agent %s: no such agent; the agents are %s (agentty agents lists them)", name, strings.Join(names, ", "))
}

// workspaceTrusted reports whether the person trusts the workspace dir
// (absolute, symlinks resolved): --trust-workspace, or trusted.json holds
// the folder with its .agentty.json as it is now (ws; none when it was
// trusted with none). Agent files are not hashed into trusted.json:
// trusting the folder trusts the agent files in it.
func workspaceTrusted(o options, dir string, ws *wsConfig, getenv func(string) string) (bool, error) {
	if o.trustWorkspace {
		return true, nil
	}
	store, err := loadTrust(getenv)
	if err != nil {
		return false, err
	}
	if ws != nil {
		return store.holds(ws), nil
	}
	f, ok := store.Folders[dir]
	return ok && f.SHA256 == "", nil
}
