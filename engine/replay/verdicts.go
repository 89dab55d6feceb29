package replay

import "github.com/agentty/agentty/engine"

// Pause names a pause of a recorded run: its run, step, phase and the
// call it held back ("" at a decide pause).
type Pause struct {
	Run  string
	Step int
	At   engine.Phase
	Call string
}

// PauseOf names the pause p.
func PauseOf(p engine.Pending) Pause {
	k := Pause{Run: p.Run, Step: p.Step, At: p.At}
	if p.ToolCall != nil {
		k.Call = p.ToolCall.ID
	}
	return k
}

// Verdicts are what the person changed at the recording's pauses: a
// result given for a tool (Respond), edited arguments, an edited request.
// A replay gives them again at the same pauses, so it reproduces what the
// person did; other verdicts (approve, deny, skip) are not in it.
func Verdicts(events []engine.Event) map[Pause]engine.Verdict {
	out := map[Pause]engine.Verdict{}
	paused := map[string]Pause{} // run → its last pause
	for _, ev := range events {
		switch d := ev.Data.(type) {
		case *engine.GatePaused:
			k := Pause{Run: ev.Run, Step: ev.Step, At: d.At}
			if d.ToolCall != nil {
				k.Call = d.ToolCall.ID
			}
			paused[ev.Run] = k
		case *engine.GateResumed:
			k, ok := paused[ev.Run]
			if !ok {
				continue
			}
			switch {
			case d.Action == engine.Respond:
				out[k] = engine.Verdict{Action: engine.Respond, Result: d.Result}
			case d.Action == engine.Proceed && d.Args != nil:
				out[k] = engine.Verdict{Action: engine.Proceed, Args: d.Args}
			}
		case *engine.RequestEdited:
			e := d.RequestEdit
			out[Pause{Run: ev.Run, Step: ev.Step, At: engine.Decide}] = engine.Verdict{Action: engine.Proceed, Edit: &e}
		}
	}
	return out
}
