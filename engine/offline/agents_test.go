package offline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/tools"
)

// agentSchema is the tool agent as the engine offers it: the schema's agent
// an enum of the names.
func agentSchema(names ...string) engine.ToolSchema {
	enum, _ := json.Marshal(names)
	return engine.ToolSchema{
		Name:        "agent",
		Description: "Delegate a task to an agent.",
		Parameters: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"agent":{"type":"string","enum":%s},`+
			`"task":{"type":"string"}},"required":["agent","task"],"additionalProperties":false}`, enum)),
	}
}

func toolSchema(name string) engine.ToolSchema {
	return engine.ToolSchema{Name: name, Parameters: json.RawMessage(`{"type":"object"}`)}
}

// decide asks the offline model for its decision on msgs with tools.
func decide(t *testing.T, toolset []engine.ToolSchema, msgs ...engine.Message) engine.Decision {
	t.Helper()
	d, err := offline.Model{}.Decide(context.Background(), &engine.Request{Messages: msgs, Tools: toolset})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func user(text string) engine.Message { return engine.Message{Role: engine.RoleUser, Content: text} }

// calls renders a decision's calls as "name(args)" joined by "; ".
func calls(d engine.Decision) string {
	var out []string
	for _, c := range d.ToolCalls {
		out = append(out, c.Name+string(c.Args))
	}
	return strings.Join(out, "; ")
}

// TestDelegationDecisions checks what the offline model decides on
// requests to delegate and to hand off, with and without the agents offered.
func TestDelegationDecisions(t *testing.T) {
	agents := []engine.ToolSchema{toolSchema("calculator"), agentSchema("researcher", "calc"), toolSchema("transfer_to_billing")}
	noEnum := []engine.ToolSchema{{Name: "agent", Parameters: json.RawMessage(`{"type":"object","properties":{"agent":{"type":"string"}}}`)}}
	plain := []engine.ToolSchema{toolSchema("calculator")}
	tests := []struct {
		name  string
		tools []engine.ToolSchema
		task  string
		calls string // the calls wanted, as calls renders them; "" for an answer
		text  []string
		run   string // the request's run, when not a top-level one
	}{
		{name: "ask the NAME agent", tools: agents, task: "ask the researcher agent to find the Go 1.26 release notes",
			calls: `agent{"agent":"researcher","task":"find the Go 1.26 release notes"}`},
		{name: "ask NAME", tools: agents, task: "ask calc to what is 17*23",
			calls: `agent{"agent":"calc","task":"what is 17*23"}`},
		{name: "ask, case aside", tools: agents, task: "Please ask the Researcher agent to read README.md",
			calls: `agent{"agent":"researcher","task":"read README.md"}`},
		{name: "delegate to NAME:", tools: agents, task: "delegate to researcher: summarise the README",
			calls: `agent{"agent":"researcher","task":"summarise the README"}`},
		{name: "delegate to the NAME agent:", tools: agents, task: "delegate to the calc agent: 2+2",
			calls: `agent{"agent":"calc","task":"2+2"}`},
		{name: "two in one sentence", tools: agents, task: "ask the researcher agent to list files and the calc agent to what is 17*23",
			calls: `agent{"agent":"researcher","task":"list files"}; agent{"agent":"calc","task":"what is 17*23"}`},
		{name: "two, the second asked again", tools: agents, task: "ask researcher to read README.md, and ask calc to what is 2^10",
			calls: `agent{"agent":"researcher","task":"read README.md"}; agent{"agent":"calc","task":"what is 2^10"}`},
		{name: "two delegated", tools: agents, task: "delegate to researcher: list files and to calc: 6*7",
			calls: `agent{"agent":"researcher","task":"list files"}; agent{"agent":"calc","task":"6*7"}`},
		{name: "an and that is no second agent", tools: agents, task: "ask researcher to compare go and rust to python",
			calls: `agent{"agent":"researcher","task":"compare go and rust to python"}`},
		{name: "unknown agent", tools: agents, task: "ask the writer agent to write a poem",
			text: []string{`no agent named "writer"`, "researcher, calc"}},
		{name: "one of two unknown: no call at all", tools: agents, task: "ask the researcher agent to list files and the writer agent to write a poem",
			text: []string{`no agent named "writer"`, "researcher, calc"}},
		{name: "a handoff agent asked", tools: agents, task: "ask billing to refund me",
			text: []string{`no agent named "billing"`, `say "transfer to billing"`}},
		{name: "no agents offered", tools: plain, task: "ask the calc agent to what is 2+2",
			text: []string{`no agent named "calc"`, "no agents to delegate to"}},
		{name: "no tools at all", tools: nil, task: "ask researcher to find things",
			text: []string{`no agent named "researcher"`, "no agents to delegate to"}},
		{name: "the tool without names", tools: noEnum, task: "ask researcher to find things",
			text: []string{`no agent named "researcher"`, "names no agents"}},
		{name: "a trailing to is no second agent", tools: agents, task: "ask researcher to list files and calc to",
			calls: `agent{"agent":"researcher","task":"list files and calc to"}`},
		{name: "an empty task", tools: agents, task: "delegate to researcher: , and to calc: 6*7",
			text: []string{"What should researcher do?"}},
		{name: "transfer", tools: agents, task: "transfer to billing", calls: `transfer_to_billing{}`},
		{name: "hand off to the NAME agent", tools: agents, task: "Hand off to the Billing agent.", calls: `transfer_to_billing{}`},
		{name: "hand off with a task", tools: agents, task: "hand off to billing: what is 2+2", calls: `transfer_to_billing{}`},
		{name: "transfer to no such agent", tools: agents, task: "transfer to sales",
			text: []string{`no agent named "sales" to hand off to`, "billing"}},
		{name: "transfer to a delegate", tools: agents, task: "transfer to researcher",
			text: []string{`no agent named "researcher" to hand off to`, `say "ask the researcher agent to …"`}},
		{name: "transfer with no agents", tools: plain, task: "transfer to billing",
			text: []string{`no agent named "billing"`, "No agent takes over"}},
		{name: "what came before still works", tools: agents, task: "what is 17*23?", calls: `calculator{"expression":"17*23"}`},
		{name: "a sub-run at the depth limit", tools: plain, run: "run-1/1/call_1_0", task: "ask the calc agent to what is 2+2",
			text: []string{`no agent named "calc"`, "depth limit (max_depth)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := offline.Model{}.Decide(context.Background(), &engine.Request{Messages: []engine.Message{user(tt.task)}, Tools: tt.tools, Run: tt.run})
			if err != nil {
				t.Fatal(err)
			}
			if got := calls(d); got != tt.calls {
				t.Fatalf("%q: calls %s (text %q), want %s", tt.task, got, d.Text, tt.calls)
			}
			for _, c := range d.ToolCalls {
				if c.Name == "agent" && c.ID != "" {
					t.Errorf("%q: agent call with id %q; the engine names them", tt.task, c.ID)
				}
			}
			for _, w := range tt.text {
				if !strings.Contains(d.Text, w) {
					t.Errorf("%q: answer %q, want it to contain %q", tt.task, d.Text, w)
				}
			}
		})
	}
}

// TestAnswerFromAgents checks the answer after the agent calls' results:
// one line each, naming the agent, errors told as failures.
func TestAnswerFromAgents(t *testing.T) {
	ask := user("ask the researcher agent to find the notes and the calc agent to what is 17*23")
	decided := engine.Message{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{
		{ID: "call_1_0", Name: "agent", Args: json.RawMessage(`{"agent":"researcher","task":"find the notes"}`)},
		{ID: "call_1_1", Name: "agent", Args: json.RawMessage(`{"agent":"calc","task":"what is 17*23"}`)},
	}}
	result := func(id, content string) engine.Message {
		return engine.Message{Role: engine.RoleTool, ToolCallID: id, Name: "agent", Content: content}
	}
	tools := []engine.ToolSchema{agentSchema("researcher", "calc")}
	tests := []struct {
		name    string
		results []engine.Message
		want    string
	}{
		{"both answered", []engine.Message{result("call_1_0", "The notes are in doc/go1.26.html."), result("call_1_1", "17*23 = 391")},
			"- researcher says: The notes are in doc/go1.26.html.\n- calc says: 17*23 = 391"},
		{"one failed", []engine.Message{result("call_1_0", "error: step limit reached (25 steps)"), result("call_1_1", "17*23 = 391")},
			"- researcher failed: step limit reached (25 steps)\n- calc says: 17*23 = 391"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(t, tools, append([]engine.Message{ask, decided}, tt.results...)...)
			if len(d.ToolCalls) != 0 || d.Text != tt.want {
				t.Errorf("calls %s, answer %q; want the answer %q", calls(d), d.Text, tt.want)
			}
		})
	}
}

// TestAfterHandoff checks the first decisions of the agent a run was handed
// to: it answers the request when it can, or says who it is.
func TestAfterHandoff(t *testing.T) {
	transferCall := func(name string) engine.Message {
		return engine.Message{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "call_1_0", Name: "transfer_to_" + name, Args: json.RawMessage(`{}`)}}}
	}
	transferred := func(name, content string) engine.Message {
		return engine.Message{Role: engine.RoleTool, ToolCallID: "call_1_0", Name: "transfer_to_" + name, Content: content}
	}
	calc := []engine.ToolSchema{toolSchema("calculator")}
	tests := []struct {
		name  string
		tools []engine.ToolSchema
		msgs  []engine.Message
		calls string
		text  string
	}{
		{name: "the request after the transfer", tools: calc,
			msgs:  []engine.Message{user("transfer to calc: what is 17*23"), transferCall("calc"), transferred("calc", "transferred to calc")},
			calls: `calculator{"expression":"17*23"}`},
		{name: "a request another model handed off", tools: calc,
			msgs:  []engine.Message{user("what is 2+2?"), transferCall("calc"), transferred("calc", "transferred to calc")},
			calls: `calculator{"expression":"2+2"}`},
		{name: "nothing more asked", tools: calc,
			msgs: []engine.Message{user("hand off to the billing agent"), transferCall("billing"), transferred("billing", "transferred to billing")},
			text: "billing here: I have taken over the conversation. What can I do for you?"},
		{name: "what it cannot do", tools: calc,
			msgs: []engine.Message{user("transfer to billing and write me a poem"), transferCall("billing"), transferred("billing", "transferred to billing")},
			text: "billing here: " + offline.Help},
		{name: "the answer after its own tool", tools: calc,
			msgs: []engine.Message{user("transfer to calc: what is 17*23"), transferCall("calc"), transferred("calc", "transferred to calc"),
				{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "call_2_0", Name: "calculator", Args: json.RawMessage(`{"expression":"17*23"}`)}}},
				{Role: engine.RoleTool, ToolCallID: "call_2_0", Name: "calculator", Content: "17*23 = 391"}},
			text: "17*23 = 391"},
		{name: "a transfer that failed", tools: calc,
			msgs: []engine.Message{user("transfer to calc"), transferCall("calc"), transferred("calc", "error: cancelled")},
			text: "The transfer_to_calc tool failed: cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(t, tt.tools, tt.msgs...)
			if got := calls(d); got != tt.calls || d.Text != tt.text {
				t.Errorf("calls %s, answer %q; want calls %s, answer %q", got, d.Text, tt.calls, tt.text)
			}
		})
	}
}

// TestDelegationEndToEnd runs the offline model on a real engine with a
// delegate agent calc whose only tool is the calculator.
func TestDelegationEndToEnd(t *testing.T) {
	all := enginetest.Registry(t, tools.Builtins()...)
	e := engine.New(engine.Config{Model: offline.Model{}, Tools: all, Agents: []engine.Agent{
		{Name: "calc", Description: "Does arithmetic.", Tools: enginetest.Registry(t, tools.Calculator())},
	}})
	rec := &enginetest.Recorder{}
	res := e.Run(context.Background(), engine.NewSession("s"), "ask the calc agent to what is 17*23", rec)
	if res.StopReason != engine.StopAnswered || !strings.Contains(res.Answer, "391") {
		t.Fatalf("stop %s (%v), answer %q; want an answer with 391", res.StopReason, res.Err, res.Answer)
	}
	if res.Answer != "calc says: 17*23 = 391" {
		t.Errorf("answer %q, want %q", res.Answer, "calc says: 17*23 = 391")
	}
	var sub, parentStarted, parentFinished, subStarted, subFinished, calc = "", -1, -1, -1, -1, -1
	for i, ev := range rec.Events() {
		switch d := ev.Data.(type) {
		case *engine.ToolStarted:
			if ev.ParentRun == "" && d.Name == "agent" {
				parentStarted = i
			}
		case *engine.ToolFinished:
			if ev.ParentRun == "" && d.Name == "agent" {
				parentFinished = i
			}
			if ev.ParentRun != "" && d.Name == "calculator" && d.Status == engine.ToolOK {
				calc, sub = i, ev.Run
				if ev.Agent != "calc" || ev.ParentRun != res.RunID || ev.ParentCall == "" {
					t.Errorf("the sub-run's tool_finished: agent %q, parent run %q, parent call %q; want calc, %s and the agent call",
						ev.Agent, ev.ParentRun, ev.ParentCall, res.RunID)
				}
			}
		case *engine.RunStarted:
			if ev.ParentRun != "" {
				subStarted = i
			}
		case *engine.RunFinished:
			if ev.ParentRun != "" {
				subFinished = i
			}
		}
	}
	if calc < 0 {
		t.Fatalf("no sub-run's calculator call among the events:\n%s", kinds(rec.Events()))
	}
	if !(parentStarted < subStarted && subStarted < calc && calc < subFinished && subFinished < parentFinished) {
		t.Errorf("order: agent call started %d, sub-run %s started %d, calculator %d, sub-run finished %d, agent call finished %d",
			parentStarted, sub, subStarted, calc, subFinished, parentFinished)
	}
}

// TestTwoDelegationsEndToEnd delegates to two agents in one sentence: one
// decision, two sub-runs of their own, one line of the answer each.
func TestTwoDelegationsEndToEnd(t *testing.T) {
	e := engine.New(engine.Config{Model: offline.Model{}, Tools: enginetest.Registry(t, tools.Builtins()...), Agents: []engine.Agent{
		{Name: "calc", Description: "Does arithmetic.", Tools: enginetest.Registry(t, tools.Calculator())},
		{Name: "keeper", Description: "Keeps facts.", Tools: enginetest.Registry(t, tools.Remember(), tools.Recall())},
	}})
	rec := &enginetest.Recorder{}
	s := engine.NewSession("s")
	res := e.Run(context.Background(), s, "ask the calc agent to what is 6*7 and the keeper agent to remember that the answer is 42", rec)
	want := "- calc says: 6*7 = 42\n- keeper says: Got it, I remembered answer = 42."
	if res.StopReason != engine.StopAnswered || res.Answer != want {
		t.Fatalf("stop %s (%v), answer %q; want %q", res.StopReason, res.Err, res.Answer, want)
	}
	if d := rec.Of(engine.KindDecision); len(d) == 0 || len(d[0].Data.(*engine.Decided).ToolCalls) != 2 {
		t.Fatalf("the first decision is not two agent calls:\n%s", kinds(rec.Events()))
	}
	subs := map[string]string{} // sub-run → agent
	for _, ev := range rec.Of(engine.KindRunStarted) {
		if ev.ParentRun == res.RunID {
			subs[ev.Run] = ev.Agent
		}
	}
	if len(subs) != 2 {
		t.Errorf("sub-runs %v, want two (calc and keeper)", subs)
	}
	if len(s.Memory()) != 1 || s.Memory()[0].Agent != "keeper" {
		t.Errorf("memory %+v, want answer = 42 written by keeper", s.Memory())
	}
}

// TestHandoffEndToEnd hands a run off to calc, a handoff agent, which
// answers the rest of the request with the calculator.
func TestHandoffEndToEnd(t *testing.T) {
	e := engine.New(engine.Config{Model: offline.Model{}, Tools: enginetest.Registry(t, tools.Builtins()...), Agents: []engine.Agent{
		{Name: "calc", Description: "Does arithmetic.", Handoff: true, Tools: enginetest.Registry(t, tools.Calculator())},
	}})
	rec := &enginetest.Recorder{}
	s := engine.NewSession("s")
	res := e.Run(context.Background(), s, "transfer to calc: what is 17*23", rec)
	if res.StopReason != engine.StopAnswered || res.Answer != "17*23 = 391" {
		t.Fatalf("stop %s (%v), answer %q; want 17*23 = 391", res.StopReason, res.Err, res.Answer)
	}
	h := rec.Of(engine.KindHandoff)
	if len(h) != 1 || h[0].Data.(*engine.Handoff).To != "calc" || s.Agent != "calc" {
		t.Errorf("handoff events %v, session agent %q; want one to calc", h, s.Agent)
	}
}

func kinds(evs []engine.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "%s %s %s\n", ev.Run, ev.Kind, ev.Agent)
	}
	return b.String()
}

// FuzzDelegation checks that whatever is asked, the offline model delegates
// only to offered agents, with a task, and hands off only through an
// offered tool.
func FuzzDelegation(f *testing.F) {
	for _, s := range []string{
		"ask the researcher agent to find X and the calc agent to what is 2+2",
		"delegate to researcher: , and to calc: 6*7",
		"ask writer to write", "transfer to billing: what is 1+1", "hand off to the sales agent",
		"ask calc to ask researcher to and the calc agent to", "ask the  agent to x",
	} {
		f.Add(s)
	}
	offered := []engine.ToolSchema{toolSchema("calculator"), agentSchema("researcher", "calc"), toolSchema("transfer_to_billing")}
	f.Fuzz(func(t *testing.T, task string) {
		d := decide(t, offered, user(task))
		for _, c := range d.ToolCalls {
			switch c.Name {
			case "agent":
				var a struct{ Agent, Task string }
				if err := json.Unmarshal(c.Args, &a); err != nil || (a.Agent != "researcher" && a.Agent != "calc") || a.Task == "" {
					t.Errorf("%q: agent call %s", task, c.Args)
				}
			case "calculator", "transfer_to_billing":
			default:
				t.Errorf("%q: a call of %s, which is not offered", task, c.Name)
			}
		}
	})
}
