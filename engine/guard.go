package engine

// Guardrails that ask an agent. The judge is a sub-run of the run it
// judges: journaled with the session (its events carry parent_run and a
// parent_call of guard_in_N or guard_out_N), charged to the run's budget,
// its tool calls under the same approvals. A judge is offered its agent's
// own tools but neither delegates nor hands off; the judges of the agents
// may not form a cycle (setupAgents), and a judge runs at most one level
// below the depth limit.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// checkGuardrails runs the guardrails gs on text: the first that fails.
func (r *run) checkGuardrails(ctx context.Context, gs []Guardrail, text string, output bool) error {
	for i, g := range gs {
		if g.Agent != "" {
			if ok, why := r.askGuard(ctx, g.Agent, guardCall(i, output), text); !ok {
				return &GuardrailError{Name: g.Name, Reason: why, Output: output}
			}
		}
		if g.Pattern != nil {
			if m := g.Pattern.FindString(text); m != "" {
				return &GuardrailError{Name: g.Name, Reason: fmt.Sprintf("the text matches /%s/ (%q)", g.Pattern, Clip(m, 60)), Output: output}
			}
		}
		if g.Check != nil {
			if ok, why := g.Check(text); !ok {
				return &GuardrailError{Name: g.Name, Reason: why, Output: output}
			}
		}
	}
	return nil
}

// guardCall names the judging of the guardrail i of a run's input or
// output guardrails, as its sub-run's parent call.
func guardCall(i int, output bool) string {
	if output {
		return "guard_out_" + strconv.Itoa(i)
	}
	return "guard_in_" + strconv.Itoa(i)
}

// guardPrompt is the task a guardrail's agent judges a text with.
const guardPrompt = "Judge the text below against your instructions. Answer with one line: pass, or fail: and the reason.\n\n"

// askGuard runs the agent on text as a sub-run of r, named call, and reads
// its verdict: pass, or fail and why. An agent that cannot judge (an
// error, no answer, too deep) fails the text.
func (r *run) askGuard(ctx context.Context, agent, call, text string) (bool, string) {
	if r.tree == nil || r.e.agents == nil || r.e.agents.byName[agent] == nil {
		return false, fmt.Sprintf("its agent %s is not defined", agent)
	}
	if r.depth >= r.e.cfg.MaxDepth+1 {
		return false, fmt.Sprintf("its agent %s was not asked: it would run %d levels deep, past the depth limit of %d (a judge may go one below it)", agent, r.depth+1, r.e.cfg.MaxDepth)
	}
	id := r.id + "/" + strconv.Itoa(r.s.run.Turn) + "/" + call
	res := r.subRun(ctx, id, call, agent, guardPrompt+text, r.step, true)
	if res.StopReason != StopAnswered {
		return false, fmt.Sprintf("its agent %s could not judge: %s %v", agent, res.StopReason, res.Err)
	}
	verdict := strings.TrimSpace(res.Answer)
	switch low := strings.ToLower(verdict); {
	case strings.HasPrefix(low, "pass"):
		return true, ""
	case strings.HasPrefix(low, "fail"):
		return false, fmt.Sprintf("its agent %s says: %s", agent, OneLine(verdict, 200))
	}
	return false, fmt.Sprintf("its agent %s answered neither pass nor fail: reason (its model may not be able to judge): %s", agent, OneLine(verdict, 120))
}

// guardCycle returns a cycle of guardrail judges among the agents (nil:
// none), as the names along it, the first repeated at the end.
func (ag *agents) guardCycle() []string {
	names := make([]string, 0, len(ag.byName))
	for name := range ag.byName {
		names = append(names, name)
	}
	slices.Sort(names)
	return FindCycle(names, func(n string) []string {
		var judges []string
		if a := ag.byName[n]; a != nil {
			for _, g := range append(slices.Clone(a.Guardrails.Input), a.Guardrails.Output...) {
				if g.Agent != "" {
					judges = append(judges, g.Agent)
				}
			}
		}
		return judges
	})
}
