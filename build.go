package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentty/agentty/agents"
	"github.com/agentty/agentty/config"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/engine/openai"
	"github.com/agentty/agentty/engine/script"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/tools"
	"github.com/agentty/agentty/traces"
	"github.com/nats-io/nats.go"
)

// setup is what a run needs: the model, the tools and the engine. Close
// ends the MCP servers and releases the workspace.
type setup struct {
	modelName string
	engine    *engine.Engine
	registry  *engine.Registry
	rows      []toolRow
	mcp       *tools.MCP
	ws        *tools.Workspace
	// notices are problems to tell the person about, such as an MCP
	// server that did not start.
	notices []string
	// tracing exports spans when --otlp or OTEL_EXPORTER_OTLP_ENDPOINT
	// asks for it; nil otherwise (nothing is made when tracing is off).
	tracing *traces.Tracing
	trace   *traces.Sink // the run's trace sink, nil when not tracing
	// bus publishes every event on NATS when --nats or AGENTTY_NATS_URL
	// names a server; nil otherwise (nothing connects).
	bus *bus.Sink
	// busConn is the connection bus publishes on, the setup's own: it is
	// closed with the setup, never by the sink.
	busConn *nats.Conn
	// agents are the agents of the workspace's and the user's agent
	// files, and the files that failed to load (agents.go).
	agents agents.Set
	// instructions are the project instructions (AGENTS.md), read again
	// when they change; limits the model's context window as known.
	instructions *config.Instructions
	limits       config.ModelLimits
	// knowledge is the search index search_knowledge asks, opened on
	// its first search (search_cmd.go).
	knowledge *knowledge
}

func (s *setup) Close() {
	s.closeTraces()
	s.closeBus()
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
func pickModel(o options, cfg *config.Settings, getenv func(string) string) (engine.Model, string, error) {
	name := cmp.Or(o.model, cfg.Model)
	key := getenv("OPENAI_API_KEY")
	base := cmp.Or(o.baseURL, getenv("OPENAI_BASE_URL"), cfg.BaseURL)
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
	mc := openai.Config{Model: name, BaseURL: base, APIKey: key, Timeout: o.timeout, Temperature: cfg.Temperature}
	if o.temperature >= 0 {
		mc.Temperature = &o.temperature
	}
	if (traces.Config{Endpoint: o.otlp, Getenv: getenv}).Enabled() {
		// W3C trace context out: a proxy in front of the model joins the trace.
		mc.Headers = func(r *engine.Request) http.Header {
			return http.Header{"Traceparent": {traces.Traceparent(r.Session, r.Run, r.Step)}}
		}
	}
	return openai.New(mc), name, nil
}

func build(ctx context.Context, o options, gate engine.Gate, getenv func(string) string) (*setup, error) {
	if o.maxSteps <= 0 {
		return nil, errUsage{fmt.Errorf("--max-steps must be at least 1, not %d", o.maxSteps)}
	}
	if o.budget < 0 {
		return nil, errUsage{fmt.Errorf("--context-budget must be positive, not %d", o.budget)}
	}
	wsDir := cmp.Or(o.workspace, ".")
	cfg, ws, err := config.Load(getenv, wsDir)
	if err != nil {
		return nil, err
	}
	var notices []string
	if ws != nil {
		trusted, notice, err := decideTrust(o, ws, getenv)
		if err != nil {
			return nil, err
		}
		if trusted {
			cfg.Merge(ws.Cfg)
		} else {
			cfg.Merge(ws.Safe())
			if notice != "" {
				notices = append(notices, notice)
			}
		}
	}
	maxSteps := o.maxSteps
	if !o.maxStepsSet && cfg.MaxSteps > 0 {
		maxSteps = cfg.MaxSteps
	}
	m, name, err := pickModel(o, cfg, getenv)
	if err != nil {
		return nil, err
	}
	st := &setup{modelName: name, notices: notices}
	if st.ws, err = tools.OpenWorkspace(wsDir); err != nil {
		return nil, err
	}
	var base []engine.Tool
	sources := map[string]string{}
	add := func(source string, ts ...engine.Tool) {
		for _, t := range ts {
			base = append(base, t)
			sources[t.Name] = source
		}
	}
	add("builtin", tools.Builtins()...)
	add("workspace", st.ws.ReadFile(), st.ws.ListDir(), st.ws.SearchFiles(), st.ws.WriteFile(), st.ws.EditFile())
	st.knowledge = newKnowledge(func() (*sessions.Store, error) { return o.localStore(getenv) }, wsDir, embedding(o, cfg, getenv))
	add("search", tools.SearchKnowledge(st.knowledge))
	if o.allowShell || (cfg.AllowShell != nil && *cfg.AllowShell) {
		add("shell", st.ws.RunShell(0, cfg.ShellEnv...))
	}
	if len(cfg.HTTP.AllowHosts) > 0 {
		add("http", tools.HTTPGet(cfg.HTTP.AllowHosts, nil))
	}
	st.registry, _ = engine.NewRegistry()
	redact := config.NewRedactor(getenv, cfg)
	// all is every tool with the config's policies and timeouts, its
	// results redacted; MCP tools are read again when a server's list
	// changes.
	all := func() []engine.Tool {
		ts := slices.Clone(base)
		if st.mcp != nil {
			ts = append(ts, st.mcp.Tools()...)
		}
		for i, t := range ts {
			if tc, ok := cfg.Tool(t.Name); ok {
				if tc.Policy != "" {
					ts[i].Policy = tc.Policy
				}
				if d := tc.TimeLimit(); d > 0 {
					ts[i].Timeout = d
				}
			}
			ts[i] = redact.Tool(ts[i])
		}
		return ts
	}
	if len(cfg.MCPServers) > 0 {
		servers := map[string]tools.MCPServer{}
		for name, srv := range cfg.MCPServers {
			servers[name] = tools.MCPServer(srv)
		}
		st.mcp = tools.StartMCP(ctx, servers, tools.MCPConfig{LogDir: o.mcpLogDir(getenv), OnChange: func() {
			ts := all()
			st.registry.Replace(ts...)
			st.agents.Refresh(ts)
		}})
		for _, s := range st.mcp.Status() {
			if !s.OK {
				st.notices = append(st.notices, redact.Redact(s.Error)+"; its tools are unavailable")
			}
			if s.Warning != "" {
				st.notices = append(st.notices, fmt.Sprintf("MCP server %s: %s", s.Server, redact.Redact(s.Warning)))
			}
		}
	}
	ts := all()
	if err := st.registry.Replace(ts...); err != nil {
		st.Close()
		return nil, err
	}
	for _, t := range st.registry.Tools() {
		source, ok := sources[t.Name]
		if !ok {
			server, _, _ := strings.Cut(t.Name, "__")
			source = "mcp:" + server
		}
		st.rows = append(st.rows, toolRow{Name: t.Name, Source: source, Policy: t.Policy, Description: t.Description, Schema: t.Schema})
	}
	agents, err := st.loadAgents(o, cfg, wsDir, ws, getenv)
	if err != nil {
		st.Close()
		return nil, err
	}
	// The budget: --context-budget or context_budget, else the model's
	// window less its output (models.go), else the engine's default.
	st.limits = config.LookupLimits(name, cfg.Models)
	budget := config.ContextBudgetFor(cmp.Or(o.budget, cfg.ContextBudget), st.limits)
	if n := config.BudgetNotice(name, budget, st.limits); n != "" {
		st.notices = append(st.notices, n)
	}
	compact, err := compaction(o, cfg, cmp.Or(budget, engine.DefaultBudget), getenv)
	if err != nil {
		st.Close()
		return nil, err
	}
	if st.instructions, err = config.NewInstructions(wsDir, getenv); err != nil {
		st.Close()
		return nil, err
	}
	in, problems := st.instructions.Load()
	st.notices = append(st.notices, problems...)
	if n := config.InstructionsNotice(in); n != "" {
		st.notices = append(st.notices, n)
	}
	ecfg := engine.Config{
		Model:     m,
		ModelName: name,
		Tools:     st.registry,
		MaxSteps:  maxSteps,
		Budget:    budget,
		Window:    st.limits.Window,
		Compact:   compact,
		System:    cmp.Or(cfg.SystemPrompt, systemPrompt),
		Gate:      gate,
		Agents:    agents,
		Agent:     o.agent,
		MaxDepth:  cfg.MaxDepth,
		MaxCalls:  cfg.MaxToolCalls,
		Instructions: func() engine.Instructions {
			in, _ := st.instructions.Load() // its problems were told at start
			return in
		},
	}
	redact.EngineConfig(&ecfg)
	st.engine = engine.New(ecfg)
	if err := st.engine.Err(); err != nil {
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

// startBus connects to the NATS server of --nats or AGENTTY_NATS_URL, once
// for every run of the setup. A server that cannot be reached is a notice,
// not an error: the runs go on, journaled, unpublished.
func (s *setup) startBus(o options, getenv func(string) string) error {
	url := o.natsURL(getenv)
	if url == "" {
		if o.natsCreds != "" {
			return errUsage{fmt.Errorf("--nats-creds needs --nats URL (or AGENTTY_NATS_URL)")}
		}
		return nil
	}
	nc, err := bus.Connect(bus.Config{URL: url, Creds: o.natsCreds, Name: "agentty " + s.modelName})
	if errors.As(err, new(bus.UsageError)) {
		return errUsage{err}
	}
	if err != nil {
		s.notices = append(s.notices, err.Error()+"; events are not published (the journal has them)")
		return nil
	}
	s.bus, s.busConn = bus.NewSink(nc), nc
	return nil
}

// closeBus sends what is still buffered (waiting a bounded time) and says,
// once, what could not be published; "" when everything was.
func (s *setup) closeBus() string {
	if s.bus == nil {
		return ""
	}
	err := s.bus.Close(2 * time.Second)
	s.busConn.Close()
	s.bus, s.busConn = nil, nil
	if err != nil {
		return err.Error()
	}
	return ""
}

// startTraces sets up the OTLP pipeline when it is asked for.
func (s *setup) startTraces(ctx context.Context, o options, getenv func(string) string) error {
	tc := traces.Config{Endpoint: o.otlp, Content: o.traceContent || traces.ContentFromEnv(getenv), Getenv: getenv}
	if !tc.Enabled() {
		return nil
	}
	t, err := traces.Start(ctx, tc)
	if err != nil {
		return errUsage{err}
	}
	s.tracing = t
	s.trace = t.Sink(traces.Options{Model: s.modelName})
	return nil
}

// withTrace is journal followed by the trace sink, if the setup traces,
// and the NATS sink, if it publishes: the journal sees every event first.
func (s *setup) withTrace(journal engine.Sink) engine.Sink {
	sinks := engine.Sinks{journal}
	if s.trace != nil {
		sinks = append(sinks, s.trace)
	}
	if s.bus != nil {
		sinks = append(sinks, s.bus)
	}
	if len(sinks) == 1 {
		return journal
	}
	return sinks
}

// closeTraces sends the spans still queued (waiting a bounded time) and
// says why, once, if spans could not be sent; "" otherwise.
func (s *setup) closeTraces() string {
	if s.tracing == nil {
		return ""
	}
	err := s.tracing.Close()
	s.tracing = nil
	if err != nil {
		return err.Error()
	}
	return ""
}

const systemPrompt = "You are agentty, a careful agent working in a terminal. Use the tools when they help; " +
	"the memory facts given to you are things the user asked you to remember. Answer concisely in Markdown."

type errUsage struct{ error }

// compaction is the engine's compaction setup from c, for a run whose
// budget is budget (the trigger's percentage is of it). The model, when
// compact.model names one, is picked as the session's is.
func compaction(o options, cfg *config.Settings, budget int, getenv func(string) string) (engine.Compaction, error) {
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
		mo.model = c.Model
		m, name, err := pickModel(mo, cfg, getenv)
		if err != nil {
			return engine.Compaction{}, fmt.Errorf("config: compact.model: %w", err)
		}
		out.Model, out.ModelName = m, name
	}
	return out, nil
}
