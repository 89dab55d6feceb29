package app

// The agents of a setup: the agent files made into the engine's agents, with
// the trust of the workspace.

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/agentty/agentty/config"

	"github.com/agentty/agentty/agents"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/plugins"
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
	files := agents.Load(withPlugins(agents.Places(wsDir, wsAbs, trusted, getenv), st.plugins.Agents()))
	a := &st.Agents
	a.Errors, a.Notes = files.Errors, files.Notes
	mcp := map[string]bool{}
	for name := range cfg.MCPServers {
		mcp[name] = true
	}
	top := st.registry.Tools()
	names := st.registry.Names()
	st.agentNames = map[string]bool{}
	for _, d := range files.Defs {
		st.agentNames[d.Name] = true
	}
	st.guardCycles = agents.GuardCycles(files.Defs)
	shadowed := map[string][]*agents.Def{}
	for i := range files.Shadowed {
		d := &files.Shadowed[i]
		shadowed[d.Name] = append(shadowed[d.Name], d)
	}
	var out []engine.Agent
	for i := range files.Defs {
		def := &files.Defs[i]
		ea, ok := st.wireAgent(def, o, cfg, names, top, mcp, getenv)
		for next := shadowed[def.Name]; !ok && len(next) > 0; next = next[1:] {
			a.Notes = slices.DeleteFunc(a.Notes, func(p agents.Problem) bool { return p.File == next[0].File && p.Field == "name" })
			a.Notes = append(a.Notes, agents.Problem{File: next[0].File, Field: "name",
				Message: fmt.Sprintf("agent %q is this file's: %s did not load", def.Name, def.File)})
			ea, ok = st.wireAgent(next[0], o, cfg, names, top, mcp, getenv)
		}
		if ok {
			out = append(out, ea)
		}
	}
	if n := len(a.Errors) + len(a.Notes); n > 0 {
		untrusted := ""
		if !trusted {
			untrusted = config.ShellQuote(wsAbs)
		}
		lister := "agentty agents"
		if wsDir != "." && wsDir != "" {
			lister += " --workspace " + config.ShellQuote(wsDir)
		}
		st.Notices = append(st.Notices, a.Summary(files.Read, untrusted, lister))
	}
	if o.Agent != "" && !slices.ContainsFunc(out, func(ea engine.Agent) bool { return ea.Name == o.Agent }) {
		return nil, UsageError{a.UnknownAgent(o.Agent)}
	}
	return out, nil
}

// wireAgent makes def the engine's agent: its tools (of top, the setup's,
// named names) and its model. When it cannot be (a tool that matches
// nothing), the problem is in st.Agents.Errors and ok is false. A model
// that cannot be used here (no key for it) is noted, and the agent
// inherits the session's.
func (st *Setup) wireAgent(def *agents.Def, o Options, cfg *config.Settings, names []string, top []engine.Tool, mcp map[string]bool, getenv func(string) string) (engine.Agent, bool) {
	a := &st.Agents
	toolNames, notes, prob := def.ResolveTools(names, mcp)
	a.Notes = append(a.Notes, notes...)
	if prob == nil {
		prob = def.CheckGuardrails(st.agentNames)
	}
	if why := st.guardCycles[def.Name]; prob == nil && why != "" {
		prob = &agents.Problem{File: def.File, Field: "guardrails", Message: why}
	}
	if prob != nil {
		a.Errors = append(a.Errors, *prob)
		return engine.Agent{}, false
	}
	ea := engine.Agent{Name: def.Name, Description: def.Description, System: def.System,
		MaxSteps: def.MaxSteps, MaxCost: def.MaxCost, MaxTokens: def.MaxTokens, Handoff: def.Mode == agents.Handoff, OutputSchema: def.OutputSchema, Guardrails: def.Guardrails,
		NoDelegation: !def.Delegates()}
	model := def.Model
	if model != agents.Inherit {
		mo := o
		mo.Model = model
		var err error
		if ea.Model, ea.ModelName, err = PickModel(mo, cfg, getenv); err != nil {
			a.Notes = append(a.Notes, agents.Problem{File: def.File, Line: def.ModelLine, Field: "model",
				Message: fmt.Sprintf("%s cannot be used here (%v): the agent inherits the session's model", model, err)})
			model, ea.Model, ea.ModelName = agents.Inherit, nil, "" // not a half-made model

		}
	}
	if toolNames != nil {
		reg, err := engine.NewRegistry(agents.Allowed(top, def)...)
		if err != nil {
			a.Errors = append(a.Errors, agents.Problem{File: def.File, Line: def.ToolsLine, Field: "tools", Message: err.Error()})
			return engine.Agent{}, false
		}
		ea.Tools = reg
		a.Track(def, reg)
	}
	a.Rows = append(a.Rows, agents.Row{Name: def.Name, Description: def.Description, Mode: def.Mode, Model: model,
		Tools: toolNames, MaxSteps: def.MaxSteps, OutputSchema: def.OutputSchema, Guardrails: agents.Rows(def.Guardrails), Source: def.File, Scope: def.Scope})
	return ea, true
}

// loadSkills reads the skill folders of the workspace and the person into
// st.Skills; what failed or is noted goes with the agent files' summary.
func (st *Setup) loadSkills(o Options, wsDir string, ws *config.Workspace, getenv func(string) string) error {
	wsAbs, err := filepath.Abs(wsDir)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", wsDir, err)
	}
	if real, err := filepath.EvalSymlinks(wsAbs); err == nil {
		wsAbs = real
	}
	trusted, err := WorkspaceTrusted(o, wsAbs, ws, getenv)
	if err != nil {
		return err
	}
	st.Skills = agents.LoadSkills(withPlugins(agents.SkillPlaces(wsDir, wsAbs, trusted, getenv), st.plugins.Skills()))
	if n := len(st.Skills.Errors) + len(st.Skills.Notes); n > 0 {
		st.Notices = append(st.Notices, fmt.Sprintf("%d %s: %d not loaded, %d %s; agentty skills lists them",
			len(st.Skills.Skills)+len(st.Skills.Errors), engine.Plural(len(st.Skills.Skills)+len(st.Skills.Errors), "skill"),
			len(st.Skills.Errors), len(st.Skills.Notes), engine.Plural(len(st.Skills.Notes), "note")))
	}
	return nil
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

// AgentDefs reads the agents a run in o's workspace would get, from the
// places Build reads them from (the workspace's only once it is trusted,
// as Build says).
func AgentDefs(o Options, getenv func(string) string) (agents.Files, error) {
	wsDir := cmp.Or(o.Workspace, ".")
	_, ws, err := config.Load(getenv, wsDir)
	if err != nil {
		return agents.Files{}, err
	}
	wsAbs := AbsDir(wsDir)
	trusted, err := WorkspaceTrusted(o, wsAbs, ws, getenv)
	if err != nil {
		return agents.Files{}, err
	}
	return agents.Load(withPlugins(agents.Places(wsDir, wsAbs, trusted, getenv), plugins.Load(o.DataHome(getenv)).Agents())), nil
}

// withPlugins is places and then the plugins' ds, the person's own.
func withPlugins(places []agents.Place, ds []plugins.Dir) []agents.Place {
	for _, d := range ds {
		places = append(places, agents.PluginPlace(d.Path, d.Root, d.Plugin, d.One))
	}
	return places
}
