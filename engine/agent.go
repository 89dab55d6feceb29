package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Agent is a named agent that a run may delegate to or hand off to.
//
// Delegation: when any agent has Handoff false, runs are offered the tool
// agent, {"agent": NAME, "task": TEXT}. A call runs a sub-run: the agent,
// with a history that starts from the task, its own step limit and tools,
// and the session's memory; its answer is the call's result. The calls of
// one decision run in parallel. A sub-run's events carry its own run id
// (the parent's id, the parent's turn and the call's id: run-1/3/call_0), the agent's name, and the parent's
// run and call.
//
// Handoff: an agent with Handoff set is offered to runs of the other agents
// as a tool transfer_to_NAME; calling it ends the current agent's turn and
// the run goes on as that agent, with the whole conversation.
type Agent struct {
	Name        string
	Description string
	// System is the agent's system prompt.
	System string
	// Model decides for the agent; nil: the engine's Model (and ModelName).
	Model     Model
	ModelName string
	// Tools are the agent's tools; nil: all the engine's. A sub-run is
	// never offered a tool the run that delegated to it lacks.
	Tools *Registry
	// MaxSteps bounds each of the agent's runs; 0: the engine's.
	MaxSteps int
	// MaxCost (US dollars) and MaxTokens bound what each of the agent's
	// runs spends on its own model calls (0: no bound of its own; the
	// engine's bounds the top-level run, sub-runs included).
	MaxCost   float64
	MaxTokens int
	// Handoff offers the agent as transfer_to_NAME instead of through the
	// tool agent.
	Handoff bool
	// NoDelegation: the agent's runs are not offered the tool agent (its
	// file lists its tools and does not name agent). A run as an agent is
	// never offered the agent itself to delegate to.
	NoDelegation bool
	// OutputSchema is the JSON Schema of the agent's final answers (see
	// Config.OutputSchema); nil: the engine's.
	OutputSchema json.RawMessage
	// Guardrails check the agent's task and final answer.
	Guardrails Guardrails
}

// The names of the tools the engine adds when agents are defined.
const (
	// AgentTool delegates a task to an agent: {"agent": NAME, "task": TEXT}.
	AgentTool = "agent"
	// TransferPrefix starts the name of the tool that hands the run off to
	// an agent: transfer_to_NAME.
	TransferPrefix = "transfer_to_"
)

// builtin marks the tools the engine answers itself.
type builtin uint8

const (
	toolPlain    builtin = iota
	toolDelegate         // AgentTool: a sub-run
	toolTransfer         // transfer_to_NAME: a handoff
	toolAsk              // AskUserTool: a question for the person
)

// delegateTimeout bounds a sub-run as a tool call: a sub-run is bounded by
// its own step limit, not by the tool timeout.
const delegateTimeout = 7 * 24 * time.Hour

var agentName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// agents is what an engine knows of its agents.
type agents struct {
	byName    map[string]*Agent
	outputs   map[string]*outputSchema // the agents' own OutputSchema, compiled
	delegate  *registered              // the tool AgentTool, when any agent takes delegations
	transfers []*registered            // transfer_to_NAME for each handoff agent
	names     []string                 // the agents delegate offers, in order
	lines     map[string]string        // their lines in its description
	mu        sync.Mutex
	others    map[string]*registered // by agent: the tool AgentTool without that agent (nil: no other)
	offered   map[offerKey]*Registry
	narrowed  map[[2]*toolSet]*Registry
}

type offerKey struct {
	base     *toolSet
	agent    string
	delegate bool
}

// setupAgents checks the agents and makes their tools.
func (e *Engine) setupAgents() error {
	cfg := &e.cfg
	if len(cfg.Agents) == 0 {
		if cfg.Agent != "" {
			return fmt.Errorf("engine: agent %q is not defined", cfg.Agent)
		}
		return nil
	}
	ag := &agents{byName: map[string]*Agent{}, offered: map[offerKey]*Registry{}, narrowed: map[[2]*toolSet]*Registry{},
		lines: map[string]string{}, others: map[string]*registered{}}
	var names []string
	for i := range cfg.Agents {
		a := &cfg.Agents[i]
		if !agentName.MatchString(a.Name) {
			return fmt.Errorf("engine: agent name %q: use letters, digits, _ and - (at most 64)", a.Name)
		}
		if _, dup := ag.byName[a.Name]; dup {
			return fmt.Errorf("engine: agent %q is defined twice", a.Name)
		}
		ag.byName[a.Name] = a
		if a.OutputSchema != nil {
			o, err := compileOutput(a.OutputSchema)
			if err != nil {
				return fmt.Errorf("engine: agent %q: %w", a.Name, err)
			}
			if ag.outputs == nil {
				ag.outputs = map[string]*outputSchema{}
			}
			ag.outputs[a.Name] = o
		}
		desc := OneLine(a.Description, 200)
		if a.Handoff {
			t, err := compileTool(Tool{Name: TransferPrefix + a.Name, builtin: toolTransfer, Schema: json.RawMessage(`{"type":"object","properties":{}}`),
				Description: "Hand the conversation over to the " + a.Name + " agent (" + desc + "). It carries on from here and answers the person."})
			if err != nil {
				return err
			}
			ag.transfers = append(ag.transfers, t)
			continue
		}
		names = append(names, a.Name)
		ag.lines[a.Name] = fmt.Sprintf("\n- %s: %s", a.Name, desc)
	}
	ag.names = names
	if cfg.Agent != "" && ag.byName[cfg.Agent] == nil {
		return fmt.Errorf("engine: agent %q is not defined", cfg.Agent)
	}
	for _, t := range cfg.Tools.Tools() {
		if t.Name == AgentTool || strings.HasPrefix(t.Name, TransferPrefix) {
			return fmt.Errorf("engine: the tool %q has a name the engine keeps for agents", t.Name)
		}
	}
	if len(names) > 0 {
		t, err := ag.delegateTool(names)
		if err != nil {
			return err
		}
		ag.delegate = t
	}
	for _, a := range ag.byName {
		for _, g := range append(slices.Clone(a.Guardrails.Input), a.Guardrails.Output...) {
			if g.Agent != "" && (ag.byName[g.Agent] == nil || g.Agent == a.Name) {
				return fmt.Errorf("engine: agent %q: guardrail %s: %q is not another agent that is defined", a.Name, g.Name, g.Agent)
			}
		}
	}
	if c := ag.guardCycle(); c != nil {
		return fmt.Errorf("engine: guardrail judges form a cycle: %s", strings.Join(c, " → "))
	}
	e.agents = ag
	return nil
}

// delegateTool is the tool AgentTool offering names.
func (ag *agents) delegateTool(names []string) (*registered, error) {
	enum, _ := json.Marshal(names)
	var list strings.Builder
	for _, n := range names {
		list.WriteString(ag.lines[n])
	}
	schema := `{"type":"object","properties":{"agent":{"type":"string","enum":` + string(enum) +
		`,"description":"the agent to delegate to"},"task":{"type":"string","description":"everything the agent needs to know: it sees this task, not the conversation"}},"required":["agent","task"],"additionalProperties":false}`
	return compileTool(Tool{Name: AgentTool, builtin: toolDelegate, Schema: json.RawMessage(schema), Timeout: delegateTimeout,
		Description: "Delegate a task to an agent, which works on it alone with its own tools and answers; several calls in one reply run at once. The agents:" + list.String()})
}

// delegateFor is the tool AgentTool a run as agent is offered: every
// agent but itself (nil when there is no other). ag.mu is held.
func (ag *agents) delegateFor(agent string) *registered {
	if agent == "" || !slices.Contains(ag.names, agent) {
		return ag.delegate
	}
	if t, ok := ag.others[agent]; ok {
		return t
	}
	others := slices.DeleteFunc(slices.Clone(ag.names), func(n string) bool { return n == agent })
	var t *registered
	if len(others) > 0 {
		t, _ = ag.delegateTool(others) // the same schema as the whole list's, which compiled
	}
	ag.others[agent] = t
	return t
}

// compileTool makes a built-in tool ready for a derived registry.
func compileTool(t Tool) (*registered, error) {
	t.Func = func(context.Context, *Call) (string, error) {
		return "", errors.New("engine: this tool is answered by the engine")
	}
	set := &toolSet{byName: map[string]int{}}
	if err := set.add(t); err != nil {
		return nil, err
	}
	return &set.tools[0], nil
}

// profile is what a run runs as: an agent's settings, or the engine's.
type profile struct {
	agent     string
	system    string
	model     Model
	modelName string
	maxSteps  int
	maxCost   float64
	maxTokens int
	output    *outputSchema
	guard     Guardrails
	// base holds the tools of the agent; tools adds the engine's own
	// (agent, transfer_to_NAME) where offered.
	base  *Registry
	tools *Registry
}

// profile returns the settings of a run as agent name ("" or an unknown
// name: the engine's own) at the given depth, whose delegating run (or, at
// the top, the engine) has the tools parent.
func (e *Engine) profile(name string, parent *Registry, depth int) profile {
	cfg := &e.cfg
	if parent == nil {
		parent = cfg.Tools
	}
	p := profile{system: cfg.System, model: cfg.Model, modelName: cfg.ModelName, maxSteps: cfg.MaxSteps, base: parent, tools: parent}
	if depth == 0 {
		p.output = e.output // a sub-run's answer is its caller's to judge
	}
	if e.agents == nil {
		return p
	}
	if a := e.agents.byName[name]; a != nil {
		p.agent = name
		if a.System != "" {
			p.system = a.System
		}
		if a.Model != nil {
			p.model, p.modelName = a.Model, a.ModelName
		}
		p.maxCost, p.maxTokens = a.MaxCost, a.MaxTokens
		if a.MaxSteps > 0 {
			p.maxSteps = a.MaxSteps
		}
		if o := e.agents.outputs[name]; o != nil {
			p.output = o
		}
		p.guard = a.Guardrails
		if a.Tools != nil {
			p.base = e.agents.narrow(a.Tools, parent, cfg.Tools)
		}
	}
	delegate := depth < e.cfg.MaxDepth
	if a := e.agents.byName[name]; a != nil && a.NoDelegation {
		delegate = false
	}
	p.tools = e.agents.offer(p.base, p.agent, delegate)
	return p
}

// narrow returns the tools of own that parent has too.
func (ag *agents) narrow(own, parent, top *Registry) *Registry {
	if parent == top {
		return own
	}
	key := [2]*toolSet{own.set(), parent.set()}
	ag.mu.Lock()
	defer ag.mu.Unlock()
	if r := ag.narrowed[key]; r != nil {
		return r
	}
	has := key[1].byName
	r := derive(key[0], func(n string) bool { _, ok := has[n]; return ok }, nil)
	if len(ag.narrowed) > 256 {
		clear(ag.narrowed)
	}
	ag.narrowed[key] = r
	return r
}

// offer returns base and the engine's tools a run as agent may call.
func (ag *agents) offer(base *Registry, agent string, delegate bool) *Registry {
	key := offerKey{base.set(), agent, delegate}
	ag.mu.Lock()
	defer ag.mu.Unlock()
	if r := ag.offered[key]; r != nil {
		return r
	}
	var extra []*registered
	if t := ag.delegateFor(agent); delegate && t != nil {
		extra = append(extra, t)
	}
	for _, t := range ag.transfers {
		if t.Name != TransferPrefix+agent {
			extra = append(extra, t)
		}
	}
	r := derive(key.base, nil, extra)
	if len(ag.offered) > 256 {
		clear(ag.offered)
	}
	ag.offered[key] = r
	return r
}

// derive makes a registry of the tools of base that keep accepts (nil: all)
// and extra, without compiling their schemas again.
func derive(base *toolSet, keep func(string) bool, extra []*registered) *Registry {
	set := &toolSet{byName: map[string]int{}}
	for _, t := range base.tools {
		if keep == nil || keep(t.Name) {
			set.put(t)
		}
	}
	for _, t := range extra {
		if _, dup := set.byName[t.Name]; !dup {
			set.put(*t)
		}
	}
	set.toolTokens, set.toolsHash = estimateTools(set.schemas), hashTools(set.schemas)
	r := &Registry{}
	r.snap.Store(set)
	return r
}
