package ui

import (
	"encoding/json"

	"github.com/agentty/agentty/engine"
)

// Many agents in the console: a call of the tool agent starts a sub-run,
// whose events carry ParentRun and ParentCall (the run and the call that
// started it) and run under their own Run id. The Timeline hangs a
// sub-run's rows under the call's row (timeline.go), the Chat shows the
// call as one delegation line (chat.go), the status line names the active
// agent, the pause bar the agent that waits, the Memory pane the agent that
// wrote a fact.

// agentTool is the name of the tool that delegates to an agent.
const agentTool = engine.AgentTool

// delegation reads the agent and the task of a call of the tool agent from
// its arguments, made safe to draw (their JSON may spell out controls as
// \u escapes, which decoding brings back); both are empty when the
// arguments are not the tool's.
func delegation(args json.RawMessage) (agent, task string) {
	var a struct {
		Agent string `json:"agent"`
		Task  string `json:"task"`
	}
	if len(args) == 0 || json.Unmarshal(args, &a) != nil {
		return "", ""
	}
	return flatten(Sanitize(a.Agent)), flatten(Sanitize(a.Task))
}

// callRef names a tool call by its run and id, as a sub-run's envelope
// does (ParentRun, ParentCall): the newest call with that id in the run
// is the one that started it.
type callRef struct{ run, id string }

func parentOf(ev engine.Event) callRef { return callRef{ev.ParentRun, ev.ParentCall} }
