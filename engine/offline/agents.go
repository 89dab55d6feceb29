package offline

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentty/agentty/engine"
)

// This file reads requests to delegate ("ask the researcher agent to …",
// "delegate to researcher: …") and to hand off ("transfer to billing"), and
// answers from what the delegates return. It acts only on the agents the
// request offers: the names in the enum of the agent tool's schema, and the
// tools transfer_to_NAME. It never guesses a name.

const (
	agentTool      = engine.AgentTool
	transferPrefix = engine.TransferPrefix
)

var (
	// askAgentRe: "ask the NAME agent to TASK", "ask NAME to TASK".
	askAgentRe = lazyRegexp(`(?is)^\s*(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?ask\s+(?:the\s+)?([\w-]+)(\s+agent)?\s+to\s+(.+?)\s*$`)
	// delegateRe: "delegate to NAME: TASK", "delegate to the NAME agent: TASK".
	delegateRe = lazyRegexp(`(?is)^\s*(?:please\s+)?delegate\s+(?:this\s+|it\s+)?to\s+(?:the\s+)?([\w-]+)(\s+agent)?\s*:\s*(.+?)\s*$`)
	// nextJobRe is where a second delegation may start inside a task: "…
	// and the b agent to …", "… and ask b to …", "… and to b: …". It is a
	// cut only where the word names an offered agent or is followed by
	// "agent" (see jobs).
	nextJobRe = lazyRegexp(`(?i)\s*,?\s+and\s+(?:(?:ask|delegate)\s+)?(?:to\s+)?(?:the\s+)?([\w-]+)(\s+agent)?(?:\s+to\s+|\s*:\s*)`)
	// transferRe: "transfer to NAME", "hand off to the NAME agent: TASK",
	// "hand over to NAME and TASK".
	transferRe = lazyRegexp(`(?is)^\s*(?:please\s+)?(?:transfer|hand\s*-?\s*off|hand\s+over)\s+(?:me\s+|this\s+|it\s+|the\s+conversation\s+)?to\s+(?:the\s+)?([\w-]+)(\s+agent)?` +
		`(?:\s*[.!]?\s*$|\s*[:,]\s*(.*?)\s*$|\s+and\s+(?:then\s+)?(.*?)\s*$)`)
)

// job is one delegation: the agent (as the user wrote it) and its task.
type job struct{ name, task string }

// delegation reads t as a request to delegate. It returns the decision (the
// agent calls, or a plain answer when an agent is not offered) and whether
// t was such a request.
//
// The calls carry no ids: the engine gives each one a session-unique id
// (call_STEP_INDEX), which is also what names its sub-run.
func delegation(t string, req *engine.Request) (engine.Decision, bool) {
	m := askAgentRe.FindStringSubmatch(t)
	if m == nil {
		m = delegateRe.FindStringSubmatch(t)
	}
	if m == nil {
		return engine.Decision{}, false
	}
	offered, hasTool := delegates(req)
	var calls []engine.ToolCall
	var unknown []string
	for _, j := range jobs(m[1], m[3], offered) {
		name := lookup(offered, j.name)
		if name == "" {
			unknown = append(unknown, j.name)
			continue
		}
		if j.task == "" {
			return engine.Decision{Text: fmt.Sprintf("What should %s do? Say \"ask the %s agent to …\".", name, name)}, true
		}
		b, _ := json.Marshal(map[string]string{"agent": name, "task": j.task})
		calls = append(calls, engine.ToolCall{Name: agentTool, Args: b})
	}
	if len(unknown) > 0 {
		return engine.Decision{Text: noSuchAgent(unknown, offered, hasTool, handoffs(req), strings.Contains(req.Run, "/"))}, true
	}
	return engine.Decision{ToolCalls: calls}, true
}

// jobs splits the first agent's text into the delegations it holds: "X and
// the b agent to Y" is two when b is offered or followed by "agent"; "compare
// go and rust to c" stays one.
func jobs(name, rest string, offered []string) []job {
	var out []job
	for {
		cut := -1
		var next string
		var after int
		for _, m := range nextJobRe.FindAllStringSubmatchIndex(rest, -1) {
			w := rest[m[2]:m[3]]
			if m[4] >= 0 || lookup(offered, w) != "" {
				cut, next, after = m[0], w, m[1]
				break
			}
		}
		if cut < 0 {
			return append(out, job{name, strings.TrimSpace(rest)})
		}
		out = append(out, job{name, strings.TrimSpace(rest[:cut])})
		name, rest = next, rest[after:]
	}
}

// delegates returns the agents the tool agent offers, the enum of its
// schema's agent property, and whether the tool is offered at all.
func delegates(req *engine.Request) ([]string, bool) {
	for _, t := range req.Tools {
		if t.Name != agentTool {
			continue
		}
		var s struct {
			Properties struct {
				Agent struct {
					Enum []any `json:"enum"`
				} `json:"agent"`
			} `json:"properties"`
		}
		_ = json.Unmarshal(t.Parameters, &s) // a schema without the enum offers no names
		var names []string
		for _, v := range s.Properties.Agent.Enum {
			if n, ok := v.(string); ok && n != "" {
				names = append(names, n)
			}
		}
		return names, true
	}
	return nil, false
}

// handoffs returns the agents offered as tools transfer_to_NAME.
func handoffs(req *engine.Request) []string {
	var names []string
	for _, t := range req.Tools {
		if n, ok := strings.CutPrefix(t.Name, transferPrefix); ok && n != "" {
			names = append(names, n)
		}
	}
	return names
}

// lookup returns the offered name that name means (case aside), or "".
func lookup(offered []string, name string) string {
	for _, n := range offered {
		if strings.EqualFold(n, name) {
			return n
		}
	}
	return ""
}

// noSuchAgent is the plain answer to a delegation to agents not offered.
// A sub-run (sub) that is offered no agent tool is at the depth limit.
func noSuchAgent(unknown, offered []string, hasTool bool, handoff []string, sub bool) string {
	var b strings.Builder
	if len(unknown) == 1 {
		fmt.Fprintf(&b, "There is no agent named %q to delegate to.", unknown[0])
	} else {
		fmt.Fprintf(&b, "There are no agents named %s to delegate to.", quoteList(unknown))
	}
	switch {
	case len(offered) > 0:
		fmt.Fprintf(&b, " The agents I can delegate to are: %s.", strings.Join(offered, ", "))
	case hasTool:
		b.WriteString(" The agent tool names no agents.")
	case sub:
		b.WriteString(" I am an agent that was delegated to, at the delegation depth limit (max_depth), so I cannot delegate further.")
	default:
		b.WriteString(" This session has no agents to delegate to (an agent is defined in a file .agentty/agents/NAME.md; " +
			"agents are read when agentty starts, so start it again after adding one).")
	}
	for _, u := range unknown {
		if n := lookup(handoff, u); n != "" {
			fmt.Fprintf(&b, " %s takes over the conversation instead: say \"transfer to %s\".", n, n)
		}
	}
	return b.String()
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, " and ")
}

// transfer reads t as a request to hand off. It returns the decision (the
// call of transfer_to_NAME, or a plain answer when NAME is not offered) and
// whether t was such a request.
func transfer(t string, req *engine.Request) (engine.Decision, bool) {
	m := transferRe.FindStringSubmatch(t)
	if m == nil {
		return engine.Decision{}, false
	}
	targets := handoffs(req)
	if n := lookup(targets, m[1]); n != "" {
		return engine.Decision{ToolCalls: []engine.ToolCall{{Name: transferPrefix + n, Args: json.RawMessage("{}")}}}, true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "There is no agent named %q to hand off to.", m[1])
	if len(targets) > 0 {
		fmt.Fprintf(&b, " The agents I can hand off to are: %s.", strings.Join(targets, ", "))
	} else {
		b.WriteString(" No agent takes over conversations in this session.")
	}
	offered, _ := delegates(req)
	if n := lookup(offered, m[1]); n != "" {
		fmt.Fprintf(&b, " %s takes tasks instead: say \"ask the %s agent to …\".", n, n)
	}
	return engine.Decision{Text: b.String()}, true
}

// takeOver is the first decision of the agent a run was handed to: it
// answers what the person asked, the part after "transfer to NAME:" or the
// whole request when it was no transfer request, as far as it can.
func takeOver(name, task string, req *engine.Request) engine.Decision {
	rest := strings.TrimSpace(task)
	if m := transferRe.FindStringSubmatch(rest); m != nil {
		rest = m[3] + m[4]
	}
	if rest == "" {
		return engine.Decision{Text: fmt.Sprintf("%s here: I have taken over the conversation. What can I do for you?", name)}
	}
	d := plan(rest, req)
	if len(d.ToolCalls) == 0 {
		d.Text = name + " here: " + d.Text
	}
	return d
}

// handedTo returns the agent that the last tool results handed the run to,
// if they did: a transfer_to_NAME call that did not fail.
func handedTo(msgs []engine.Message) (string, bool) {
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == engine.RoleTool; i-- {
		if n, ok := isTransfer(msgs[i]); ok {
			return n, true
		}
	}
	return "", false
}

// isTransfer says whether m is the result of a handoff that happened.
func isTransfer(m engine.Message) (string, bool) {
	n, ok := strings.CutPrefix(m.Name, transferPrefix)
	return n, ok && m.Role == engine.RoleTool && n != "" && !strings.HasPrefix(m.Content, "error:")
}

// sinceHandoff returns the messages after the last handoff in msgs (all of
// them when there was none): what the agent now running did itself.
func sinceHandoff(msgs []engine.Message) []engine.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if _, ok := isTransfer(msgs[i]); ok {
			return msgs[i+1:]
		}
	}
	return msgs
}

// agentOf returns the agent that the agent call id was made to, from the
// assistant messages in msgs.
func agentOf(msgs []engine.Message, id string) string {
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.ID != id || c.Name != agentTool {
				continue
			}
			var a struct {
				Agent string `json:"agent"`
			}
			if json.Unmarshal(c.Args, &a) == nil && a.Agent != "" {
				return a.Agent
			}
		}
	}
	return "the agent"
}

// agentLine is one line of the answer for an agent call's result.
func agentLine(name, result string) string {
	if r, ok := strings.CutPrefix(result, "error:"); ok {
		return fmt.Sprintf("%s failed: %s", name, strings.TrimSpace(r))
	}
	return fmt.Sprintf("%s says: %s", name, strings.TrimSpace(result))
}
