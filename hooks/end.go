package hooks

import (
	"context"

	"github.com/agentty/agentty/engine"
)

// EndSession runs the SessionEnd hooks of r (none when r is nil) for
// session s, once its SessionStart hooks ran in this process, which ends
// for reason (Claude Code's: prompt_input_exit
// when the person quits the console, other), and journals each run on
// sink. It runs even when ctx is done (the person quit): each hook has
// its own timeout.
func EndSession(ctx context.Context, r *Runner, s *engine.Session, reason string, sink engine.Sink) error {
	if r == nil || !r.Runs() || !s.HooksStarted() {
		return nil
	}
	in := &engine.HookInput{Event: engine.HookSessionEnd, Session: s.ID, Source: reason}
	for _, hr := range r.RunHooks(context.WithoutCancel(ctx), in) {
		if _, err := s.Record(engine.KindHook, &hr, sink); err != nil {
			return err
		}
	}
	return nil
}
