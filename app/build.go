package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentty/agentty/agents"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/checkpoint"
	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/engine/openai"
	"github.com/agentty/agentty/engine/script"
	"github.com/agentty/agentty/hooks"
	"github.com/agentty/agentty/plugins"
	"github.com/agentty/agentty/search"
	"github.com/agentty/agentty/tools"
	"github.com/agentty/agentty/traces"
	"github.com/nats-io/nats.go"
)

// Setup is what a run needs: the model, the tools and the engine. Close
// ends the MCP servers and releases the workspace.
type Setup struct {
	ModelName string
	Engine    *engine.Engine
	registry  *engine.Registry
	Rows      []ToolRow
	mcp       *tools.MCP
	ws        *tools.Workspace
	shellEnv  []string         // what the shell's children are given of the environment
	redact    *config.Redactor // the secrets agentty holds, taken out of text kept
	// enableShell offers run_shell from now on (nil when it is offered).
	enableShell func() error
	shellState
	// Notices are problems to tell the person about (an MCP server down).
	Notices []string
	// tracing exports spans when --otlp or OTEL_EXPORTER_OTLP_ENDPOINT
	// asks for it; nil otherwise (nothing is made when tracing is off).
	tracing *traces.Tracing
	Trace   *traces.Sink // the run's trace sink, nil when not tracing
	// Bus publishes every event on NATS when --nats or AGENTTY_NATS_URL
	// names a server; nil otherwise (nothing connects).
	Bus *bus.Sink
	// busConn is the connection bus publishes on, the setup's own: it is
	// closed with the setup, never by the sink.
	busConn *nats.Conn
	// Agents are the Agents of the workspace's and the user's agent
	// files, and the files that failed to load (Agents.go).
	Agents agents.Set
	// instructions are the project instructions (AGENTS.md), read again
	// when they change; limits the model's context window as known.
	instructions *config.Instructions
	limits       config.ModelLimits
	// Checkpoints keeps the workspace before steps that may change it
	// (nil: no data folder).
	Checkpoints *checkpoint.Store
	// agentNames are the agents the files define (a guardrail may ask
	// one), guardCycles those whose judges lead back to them (refused).
	agentNames  map[string]bool
	guardCycles map[string]string
	plugins     *plugins.Set // the plugins the person added
	// Skills are the skill folders of the workspace and the person.
	Skills agents.Skills
	// hooks are the hooks of the person's files and a trusted
	// workspace's (hooks_setup.go).
	hooks *hooks.Runner
	// knowledge is the search index search_knowledge asks, opened on
	// its first search (search_cmd.go).
	knowledge *knowledge
	// commands are the custom slash commands (commands.go).
	commands *commandKit
}

func (s *Setup) Close() {
	s.CloseTraces()
	s.CloseBus()
	if s.knowledge != nil {
		s.knowledge.Close()
	}
	if s.mcp != nil {
		s.mcp.Close()
	}
	if s.ws != nil {
		s.ws.Close()
	}
}

// model picks the model: --model, else the config's, else an
// OpenAI-compatible one when a key or base URL is set, else offline.
func PickModel(o Options, cfg *config.Settings, getenv func(string) string) (engine.Model, string, error) {
	name := cmp.Or(o.Model, cfg.Model)
	key := getenv("OPENAI_API_KEY")
	base := cmp.Or(o.BaseURL, getenv("OPENAI_BASE_URL"), cfg.BaseURL)
	if name == "" {
		name = offline.Name
		if key != "" || base != "" {
			name = cmp.Or(getenv("AGENTTY_MODEL"), "gpt-4o-mini")
		}
	}
	switch {
	case name == offline.Name:
		return offline.Model{}, name, nil
	case strings.HasPrefix(name, "script:"):
		sm, err := script.Load(strings.TrimPrefix(name, "script:"))
		return sm, name, err
	case key == "" && base == "":
		return nil, "", fmt.Errorf("model %q needs OPENAI_API_KEY, or --base-url (or OPENAI_BASE_URL) for a local server such as Ollama; --model offline works with neither", name)
	}
	mc := openai.Config{Model: name, BaseURL: base, APIKey: key, Timeout: o.Timeout, Temperature: cfg.Temperature, MaxAnswerBytes: cfg.MaxAnswerBytes}
	if o.Temperature >= 0 {
		mc.Temperature = &o.Temperature
	}
	if (traces.Config{Endpoint: o.OTLP, Getenv: getenv}).Enabled() {
		// W3C trace context out: a proxy in front of the model joins the trace.
		mc.Headers = func(r *engine.Request) http.Header {
			return http.Header{"Traceparent": {traces.Traceparent(r.Session, r.Run, r.Step)}}
		}
	}
	return openai.New(mc), name, nil
}

// Build is the composition root: the settings (the user's, the
// workspace's as far as it is trusted), the model, the tools (built-in,
// the workspace's, search, shell and http as allowed, MCP servers), the
// agents, and the engine over them, with traces and NATS when asked for.
// gate pauses the runs (nil: never). Close the Setup when done.
func Build(ctx context.Context, o Options, gate engine.Gate, getenv func(string) string) (*Setup, error) {
	if o.MaxSteps <= 0 {
		return nil, UsageError{fmt.Errorf("--max-steps must be at least 1, not %d", o.MaxSteps)}
	}
	if o.Budget < 0 {
		return nil, UsageError{fmt.Errorf("--context-budget must be positive, not %d", o.Budget)}
	}
	wsDir := cmp.Or(o.Workspace, ".")
	if o.Agent != "" {
		o.Agent = agents.NormalName(o.Agent) // the name as its file wrote it (a dot) works too
	}
	cfg, ws, trusted, notices, err := settings(o, wsDir, getenv)
	if err != nil {
		return nil, err
	}
	m, name, err := PickModel(o, cfg, getenv)
	if err != nil {
		return nil, err
	}
	st := &Setup{ModelName: name, Notices: notices, plugins: plugins.Load(o.DataHome(getenv))}
	st.Notices = append(append(st.Notices, st.plugins.Notes...), st.plugins.MergeMCP(cfg)...) // the person's own
	if st.ws, err = tools.OpenWorkspace(wsDir); err != nil {
		return nil, err
	}
	st.redact = config.NewRedactor(getenv, cfg)
	if err := st.loadSkills(o, wsDir, ws, getenv); err != nil {
		st.Close()
		return nil, err
	}
	if err := st.loadCommands(o, cfg, wsDir, ws, getenv); err != nil {
		st.Close()
		return nil, err
	}
	if err := st.addTools(ctx, o, cfg, wsDir, st.redact, getenv); err != nil {
		st.Close()
		return nil, err
	}
	agents, err := st.loadAgents(o, cfg, wsDir, ws, getenv)
	if err != nil {
		st.Close()
		return nil, err
	}
	ecfg, err := st.engineConfig(o, cfg, wsDir, getenv)
	if err != nil {
		st.Close()
		return nil, err
	}
	ecfg.Model, ecfg.ModelName, ecfg.Gate, ecfg.Agents = m, name, gate, agents
	if err := st.setupHooks(o, cfg, ws, trusted, getenv); err != nil {
		st.Close()
		return nil, err
	}
	if st.hooks.Runs() {
		ecfg.Hooks = st.hooks
	}
	st.redact.EngineConfig(&ecfg)
	st.Engine = engine.New(ecfg)
	if err := st.Engine.Err(); err != nil {
		st.Close()
		return nil, fmt.Errorf("agents: %w", err)
	}
	if err := st.startTraces(ctx, o, getenv); err != nil {
		st.Close()
		return nil, err
	}
	if err := st.startBus(o, getenv); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// settings are the user's settings with the workspace's over them: all of
// them in a trusted folder, else its safe part, with a notice of what was
// ignored.
func settings(o Options, wsDir string, getenv func(string) string) (*config.Settings, *config.Workspace, bool, []string, error) {
	cfg, ws, err := config.Load(getenv, wsDir)
	if err == nil && len(o.MCP) > 0 {
		cfg.Merge(&config.Settings{MCPServers: o.MCP})
	}
	if err != nil || ws == nil {
		var notes []string
		if cfg != nil {
			notes = cfg.Notes
		}
		return cfg, ws, false, notes, err
	}
	trusted, notice, err := DecideTrust(o, ws, getenv)
	if err != nil {
		return nil, nil, false, nil, err
	}
	notices := append(slices.Clone(cfg.Notes), ws.Notes...)
	if trusted {
		cfg.Merge(ws.Cfg)
		return cfg, ws, true, notices, nil
	}
	cfg.Merge(ws.Safe())
	if notice != "" {
		notices = append([]string{notice}, notices...)
	}
	return cfg, ws, false, notices, nil
}

// startMCP starts the settings' MCP servers; all is every tool of the
// setup, put in the registry again when a server's tools change. A server
// that did not start is a notice: its tools are unavailable.
func (st *Setup) startMCP(ctx context.Context, o Options, cfg *config.Settings, redact *config.Redactor, all func() []engine.Tool, getenv func(string) string) {
	servers, notes := mcpServers(cfg, cmp.Or(o.Workspace, "."), getenv)
	st.Notices = append(st.Notices, notes...)
	if len(servers) == 0 {
		return
	}
	st.mcp = tools.StartMCP(ctx, servers, tools.MCPConfig{LogDir: o.mcpLogDir(getenv), OnChange: func() {
		ts := all()
		st.registry.Replace(ts...)
		st.Agents.Refresh(ts)
	}})
	for _, s := range st.mcp.Status() {
		if !s.OK {
			st.Notices = append(st.Notices, redact.Redact(s.Error)+"; its tools are unavailable")
		}
		if s.Warning != "" {
			st.Notices = append(st.Notices, fmt.Sprintf("MCP server %s: %s", s.Server, redact.Redact(s.Warning)))
		}
	}
}

// mcpServers are the settings' MCP servers as the adapter takes them: the
// disabled left out, ${VAR} expanded from the environment (a variable that
// is not set is a notice).
func mcpServers(cfg *config.Settings, wsDir string, getenv func(string) string) (map[string]tools.MCPServer, []string) {
	servers := map[string]tools.MCPServer{}
	var notes []string
	for _, name := range slices.Sorted(maps.Keys(cfg.MCPServers)) {
		srv := cfg.MCPServers[name]
		if srv.Disabled {
			continue
		}
		srv, unset := srv.Expanded(getenv)
		if len(unset) > 0 {
			notes = append(notes, fmt.Sprintf("MCP server %s: %s not set (no default given): left empty", name, "${"+strings.Join(unset, "}, ${")+"}"))
		}
		servers[name] = mcpServer(srv, wsDir)
	}
	return servers, notes
}

// engineConfig is the engine's configuration but for the model, the gate
// and the agents: the step limit, the context budget and compaction, the
// system prompt and the project instructions.
func (st *Setup) engineConfig(o Options, cfg *config.Settings, wsDir string, getenv func(string) string) (engine.Config, error) {
	maxSteps := o.MaxSteps
	if !o.MaxStepsSet && cfg.MaxSteps > 0 {
		maxSteps = cfg.MaxSteps
	}
	// The budget: --context-budget or context_budget, else the model's
	// window less its output (config.LookupLimits), else the engine's
	// default.
	st.limits = config.LookupLimits(st.ModelName, cfg.Models)
	budget := config.ContextBudgetFor(cmp.Or(o.Budget, cfg.ContextBudget), st.limits)
	if n := config.BudgetNotice(st.ModelName, budget, st.limits); n != "" {
		st.Notices = append(st.Notices, n)
	}
	compact, err := Compaction(o, cfg, cmp.Or(budget, engine.DefaultBudget), getenv)
	if err != nil {
		return engine.Config{}, err
	}
	if st.instructions, err = config.NewInstructions(wsDir, getenv); err != nil {
		return engine.Config{}, err
	}
	share := cfg.InstructionsShare
	if share <= 0 || share > 100 {
		share = 25
	}
	full := cmp.Or(budget, engine.DefaultBudget)
	st.instructions.SetLimit(full*share/100, fmt.Sprintf("%d%% of the %d-token context budget; instructions_share in the config sets it", share, full))
	in, problems := st.instructions.Load()
	st.Notices = append(st.Notices, problems...)
	if n := config.InstructionsNotice(in); n != "" {
		st.Notices = append(st.Notices, n)
	}
	var keep engine.Checkpointer
	if home := o.DataHome(getenv); home != "" && (cfg.Checkpoints == nil || *cfg.Checkpoints) {
		if st.Checkpoints, err = checkpoint.Open(home, wsDir, 0); err != nil {
			st.Notices = append(st.Notices, "checkpoints are off: "+err.Error())
		} else {
			st.Checkpoints.RedactWith(st.redact.Redact) // /diff and /rewind show no secret
			keep = st.Checkpoints
		}
	}
	return engine.Config{
		Checkpoint:   keep,
		OutputSchema: o.OutputSchema,
		AskTimeout:   time.Duration(cfg.AskTimeout),
		Tools:        st.registry,
		MaxSteps:     maxSteps,
		Budget:       budget,
		Window:       st.limits.Window,
		Compact:      compact,
		System:       cmp.Or(cfg.SystemPrompt, systemPrompt) + st.Skills.Prompt(),
		Agent:        o.Agent,
		MaxCost:      cmp.Or(o.MaxCost, cfg.MaxCost),
		MaxTokens:    cmp.Or(o.MaxTokens, cfg.MaxTokens),
		Prices:       func(model string) (engine.Price, bool) { return config.LookupPrice(model, cfg.Models) },
		MaxDepth:     cfg.MaxDepth,
		MaxCalls:     cfg.MaxToolCalls,
		Instructions: func() engine.Instructions {
			in, _ := st.instructions.Load() // its problems were told at start
			return in
		},
	}, nil
}

// UsageError is an error in how agentty was called (a flag, a setting):
// the commands exit with 2 for it.
type UsageError struct{ error }

// Usage marks err as an error of usage.
func Usage(err error) error { return UsageError{err} }

// compaction is the engine's compaction setup from c, for a run whose
// budget is budget (the trigger's percentage is of it). The model, when
// compact.model names one, is picked as the session's is.
func Compaction(o Options, cfg *config.Settings, budget int, getenv func(string) string) (engine.Compaction, error) {
	c := cfg.Compact
	var out engine.Compaction
	if c.Auto != nil && !*c.Auto {
		out.Off = true
	}
	out.Trigger = c.TriggerTokens(budget)
	if c.KeepTurns != nil {
		out.KeepTurns = *c.KeepTurns
	}
	if c.Model != "" {
		mo := o
		mo.Model = c.Model
		m, name, err := PickModel(mo, cfg, getenv)
		if err != nil {
			return engine.Compaction{}, fmt.Errorf("config: compact.model: %w", err)
		}
		out.Model, out.ModelName = m, name
	}
	return out, nil
}

// Registry is the setup's tools, as the engine has them (a worker's
// heartbeat names them).
func (st *Setup) Registry() *engine.Registry { return st.registry }

// Workspace is the setup's workspace (nil when it has none): the folder
// the file tools are confined to.
func (st *Setup) Workspace() *tools.Workspace { return st.ws }

// Redact takes the secrets agentty holds out of text that is kept (a
// draft, the input history).
func (st *Setup) Redact(s string) string { return st.redact.Redact(s) }

// MCP is the setup's MCP servers (nil when none is configured).
func (st *Setup) MCP() *tools.MCP { return st.mcp }

// SearchIndex is the setup's search index, opened the first time it is
// asked for; an error when the setup has none.
func (st *Setup) SearchIndex() (*search.Index, error) {
	if st.knowledge == nil {
		return nil, errors.New("search: no index in this setup")
	}
	return st.knowledge.index()
}
