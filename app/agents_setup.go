package app

// The agents of a setup: the agent files made into the engine's agents, with
// the trust of the workspace.

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/agentty/agentty/config"

	"github.com/agentty/agentty/agents"
	"github.com/agentty/agentty/engine"
)

// loadAgents reads the agent files of the workspace and the user and makes
// the engine's agents of them, their tools a subset of the setup's registry
// (which must be filled). Files that fail are in st.agents.Errors, and with
// the notes in st.notices; only --agent naming no agent is an error.
func (st *Setup) loadAgents(o Options, cfg *config.Settings, wsDir string, ws *config.Workspace, getenv func(string) string) ([]engine.Agent, error) {
	wsAbs, err := filepath.Abs(wsDir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", wsDir, err)
	}
	if real, err := filepath.EvalSymlinks(wsAbs); err == nil {
		wsAbs = real
	}
	trusted, err := WorkspaceTrusted(o, wsAbs, ws, getenv)
	if err != nil {
		return nil, err
	}
	files := agents.Load(agents.Places(wsDir, wsAbs, trusted, getenv))
	a := &st.Agents
	a.Errors, a.Notes = files.Errors, files.Notes
	mcp := map[string]bool{}
	for name := range cfg.MCPServers {
		mcp[name] = true
	}
	top := st.registry.Tools()
	names := st.registry.Names()
	var out []engine.Agent
	for i := range files.Defs {
		def := &files.Defs[i]
		toolNames, notes, prob := def.ResolveTools(names, mcp)
		a.Notes = append(a.Notes, notes...)
		if prob != nil {
			a.Errors = append(a.Errors, *prob)
			continue
		}
		ea := engine.Agent{Name: def.Name, Description: def.Description, System: def.System,
			MaxSteps: def.MaxSteps, Handoff: def.Mode == agents.Handoff}
		if def.Model != agents.Inherit {
			mo := o
			mo.Model = def.Model
			if ea.Model, ea.ModelName, err = PickModel(mo, cfg, getenv); err != nil {
				a.Errors = append(a.Errors, agents.Problem{File: def.File, Line: def.ModelLine, Field: "model", Message: err.Error()})
				continue
			}
		}
		if toolNames != nil {
			if ea.Tools, err = engine.NewRegistry(agents.Allowed(top, def)...); err != nil {
				a.Errors = append(a.Errors, agents.Problem{File: def.File, Line: def.ToolsLine, Field: "tools", Message: err.Error()})
				continue
			}
			a.Track(def, ea.Tools)
		}
		out = append(out, ea)
		a.Rows = append(a.Rows, agents.Row{Name: def.Name, Description: def.Description, Mode: def.Mode, Model: def.Model,
			Tools: toolNames, MaxSteps: def.MaxSteps, Source: def.File, Scope: def.Scope})
	}
	for _, p := range a.Errors {
		st.Notices = append(st.Notices, p.String()+" (the agent is not loaded)")
	}
	for _, p := range a.Notes {
		st.Notices = append(st.Notices, p.String())
	}
	if o.Agent != "" && !slices.ContainsFunc(out, func(ea engine.Agent) bool { return ea.Name == o.Agent }) {
		return nil, UsageError{a.UnknownAgent(o.Agent)}
	}
	return out, nil
}

// WorkspaceTrusted reports whether the person trusts the workspace dir
// (absolute, symlinks resolved): --trust-workspace, or trusted.json holds
// the folder with its .agentty.json as it is now (ws; none when it was
// trusted with none). Agent files are not hashed into trusted.json:
// trusting the folder trusts the agent files in it.
func WorkspaceTrusted(o Options, dir string, ws *config.Workspace, getenv func(string) string) (bool, error) {
	if o.TrustWorkspace {
		return true, nil
	}
	store, err := config.LoadTrust(getenv)
	if err != nil {
		return false, err
	}
	if ws != nil {
		return store.Holds(ws), nil
	}
	f, ok := store.Folders[dir]
	return ok && f.SHA256 == "", nil
}
