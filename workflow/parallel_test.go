package workflow_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/workflow"
)

// tracker is a tool that notes the order its calls start in and how many
// ran at once. The first calls wait (up to a few seconds) until meet of
// them run at once, so that calls allowed to overlap do, however slow the
// machine.
type tracker struct {
	mu            sync.Mutex
	order         []string
	running, most int
	meet          int
	met           chan struct{}
	closed        bool
}

func (k *tracker) tool() engine.Tool {
	return engine.Tool{Name: "slow", Func: func(ctx context.Context, c *engine.Call) (string, error) {
		var in struct{ Text string }
		c.Bind(&in)
		k.mu.Lock()
		k.order = append(k.order, in.Text)
		k.running++
		k.most = max(k.most, k.running)
		if k.running == k.meet && !k.closed {
			close(k.met)
			k.closed = true
		}
		met := k.met
		k.mu.Unlock()
		select {
		case <-met:
		case <-time.After(3 * time.Second):
		case <-ctx.Done():
		}
		time.Sleep(time.Millisecond) // a third call, were one let in, would overlap
		k.mu.Lock()
		k.running--
		k.mu.Unlock()
		return "did " + in.Text, nil
	}}
}

// max_parallel: 1 runs a foreach's items one at a time, in order; 2 runs
// at most two at once; without it they run at once (as before). Each way
// the step's output lists the items in order and it is framed as finished
// once, with all of its items.
func TestForeachMaxParallel(t *testing.T) {
	for _, c := range []struct {
		knob    string
		most    int
		inOrder bool
	}{{"\n    max_parallel: 1", 1, true}, {"\n    max_parallel: 2", 2, false}, {"", 6, false}} {
		w := parse(t, `
name: batches
steps:
  - id: each
    foreach: '["a","b","c","d","e","f"]'`+c.knob+`
    tool: slow
    args: {text: "{{ .item }}"}
  - id: after
    tool: echo
    args: {text: "{{ .steps.each.output }}"}
`)
		k := &tracker{meet: c.most, met: make(chan struct{})}
		r := run(t, w, nil, nil, k.tool())
		if r.res.StopReason != engine.StopAnswered || r.res.Answer != `echo: ["did a","did b","did c","did d","did e","did f"]` {
			t.Fatalf("%q: %+v", c.knob, r.res)
		}
		if k.most != c.most || (c.inOrder && strings.Join(k.order, "") != "abcdef") {
			t.Errorf("%q: %d ran at once (want %d), in the order %v", c.knob, k.most, c.most, k.order)
		}
		var framed []string
		for _, ev := range r.events {
			if d, ok := ev.Data.(*engine.WorkflowStepFinished); ok {
				framed = append(framed, fmt.Sprintf("%s:%s:%d", d.Step, d.Status, d.Items))
			}
		}
		if strings.Join(framed, " ") != "each:ok:6 after:ok:0" {
			t.Errorf("%q: framed %v", c.knob, framed)
		}
	}
}

// An item that fails ends a step with max_parallel: the items after it are
// not run, and the step fails naming it.
func TestForeachMaxParallelStopsAtAFailure(t *testing.T) {
	w := parse(t, `
name: stops
steps:
  - id: each
    foreach: '["1","x","3"]'
    max_parallel: 1
    tool: calculator
    args: {expression: "{{ .item }}+1"}
`)
	calc := engine.Tool{Name: "calculator", Func: func(_ context.Context, c *engine.Call) (string, error) {
		var in struct{ Expression string }
		c.Bind(&in)
		if strings.HasPrefix(in.Expression, "x") {
			return "", fmt.Errorf("not a number")
		}
		return in.Expression, nil
	}}
	r := run(t, w, nil, nil, calc)
	calls := 0
	for _, ev := range r.events {
		if ev.Kind == engine.KindToolStarted {
			calls++
		}
	}
	if r.res.StopReason != engine.StopError || !strings.Contains(fmt.Sprint(r.res.Err), "item 1: not a number") || calls != 2 {
		t.Errorf("%d calls: %+v", calls, r.res)
	}
	if _, err := workflow.Parse("wf.yaml", []byte("name: x\nsteps:\n  - id: a\n    tool: echo\n    max_parallel: 2\n    args: {text: hi}\n")); err == nil || !strings.Contains(err.Error(), "wf.yaml:3: steps[0].max_parallel: only a step with foreach takes max_parallel") {
		t.Errorf("max_parallel without foreach: %v", err)
	}
	if _, err := workflow.Parse("wf.yaml", []byte("name: x\nsteps:\n  - id: a\n    tool: echo\n    foreach: '[1]'\n    max_parallel: 0\n    args: {text: hi}\n")); err == nil || !strings.Contains(err.Error(), "want how many items run at once, from 1 to 100") {
		t.Errorf("max_parallel 0: %v", err)
	}
}
