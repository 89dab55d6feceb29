package hooks

import (
	"context"
	"fmt"
	"sync"

	"github.com/agentty/agentty/engine"
)

// Recorded is the hooks of a journal, for a replay: at each point it
// hands back what the hooks of the recorded run decided there (the hook
// events of the same run, step, event and call), running nothing. A point
// the recording has no hooks at gets none.
func Recorded(events []engine.Event) engine.Hooks {
	rec := &recorded{at: map[string][][]engine.HookRun{}}
	last := ""
	for _, ev := range events {
		hr, ok := ev.Data.(*engine.HookRun)
		if !ok {
			last = ""
			continue
		}
		k := pointKey(ev.Run, ev.Step, hr.Event, hr.Call)
		run := *hr
		run.Feedback = "" // the engine sets it again
		if k == last {
			g := rec.at[k]
			g[len(g)-1] = append(g[len(g)-1], run)
			continue
		}
		rec.at[k] = append(rec.at[k], []engine.HookRun{run})
		last = k
	}
	return rec
}

type recorded struct {
	mu sync.Mutex
	at map[string][][]engine.HookRun // each point's runs, in the order they came
}

func (r *recorded) RunHooks(_ context.Context, in *engine.HookInput) []engine.HookRun {
	call := ""
	if in.Call != nil {
		call = in.Call.ID
	}
	k := pointKey(in.Run, in.Step, in.Event, call)
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.at[k]
	if len(g) == 0 {
		return nil
	}
	r.at[k] = g[1:]
	return append([]engine.HookRun(nil), g[0]...)
}

func pointKey(run string, step int, ev engine.HookEvent, call string) string {
	return fmt.Sprintf("%s\x00%d\x00%s\x00%s", run, step, ev, call)
}
