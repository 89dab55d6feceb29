package ui

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentty/agentty/engine"
)

// Gate is the console's engine.Gate: in step mode it pauses the run before
// every decide and every tool call, and it asks for approval of tools whose
// policy is ask, by handing the pause to the console and waiting for the
// person's verdict. It is safe for concurrent use. Parallel sub-runs pause
// one at a time: each waits to hand its pause over, and the console queues
// those it gets while one is shown.
type Gate struct {
	step     atomic.Bool
	released atomic.Pointer[string] // the run that goes on without step pauses
	requests chan gateRequest
	breaks   atomic.Pointer[engine.Breakpoints]
	// allowed are, by session, the approvals given for the rest of it (a
	// at an approval): a tool's name, or run_shell's and its command.
	mu      sync.Mutex
	allowed map[string][]string
	preview atomic.Pointer[func(*engine.ToolCall) (string, bool)]
}

// SetPreview sets what shows an approval's effect (a file's diff, a
// command and its folder) in place of its arguments; it runs on the
// run's goroutine, never the console's, and may read files.
func (g *Gate) SetPreview(f func(*engine.ToolCall) (string, bool)) { g.preview.Store(&f) }

var _ engine.Gate = (*Gate)(nil)

// gateRequest is a pause waiting for the person; the verdict goes on reply.
type gateRequest struct {
	pending engine.Pending
	reply   chan engine.Verdict
	step    string // the workflow step it holds back ("" for none), set by the console
	scroll  int    // the first argument line the pause bar shows
	// lines are the call's argument lines at width linesW (argLines).
	lines  []string
	linesW int
	// answer is what the person has typed for a question (ask_user).
	answer []rune
	// preview is what the call would do, when the gate could say
	// (SetPreview): shown in place of its arguments.
	preview string
	// edit is the person's edit of a decide pause's request (the
	// inspector), sent with the verdict.
	edit engine.RequestEdit
	// watchOnly: a pause of a run this console may not answer (another's
	// run on a worker): shown as a note, not a pause bar; reply is nil.
	watchOnly bool
	// untaken: why the run did not take this console's answer to the
	// pause (bus.Answered), shown as a note; reply is nil.
	untaken string
	// armsAt is when its keys act (grace.go); zero: at once.
	armsAt time.Time
}

// NewGate returns a gate, in step mode when step is set.
func NewGate(step bool) *Gate {
	g := &Gate{requests: make(chan gateRequest)}
	g.step.Store(step)
	return g
}

// SetStep turns step mode on or off; a run released from it pauses again
// if it is turned on.
func (g *Gate) SetStep(on bool) {
	g.released.Store(nil)
	g.step.Store(on)
}

// Stepping reports whether step mode is on.
func (g *Gate) Stepping() bool { return g.step.Load() }

// Release lets a run go on to its end without step pauses ("c" at a
// pause); step mode stays on for the runs after it. Tools whose policy is
// ask still ask.
func (g *Gate) Release(run string) { g.released.Store(&run) }

// Stop implements engine.Gate: in step mode it stops every run but the one
// released and its sub-runs (whose ids are the parent's, "/", the call's).
func (g *Gate) Stop(p engine.Pending) bool {
	if !g.step.Load() {
		return false
	}
	r := g.released.Load()
	return r == nil || p.Run != *r && !strings.HasPrefix(p.Run, *r+"/")
}

// Wait implements engine.Gate: it hands the pause to the console and waits
// for the verdict, or for ctx. An approval the person gave for the rest of
// the session is given at once, unless a breakpoint or step mode stops
// the run there.
func (g *Gate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	if p.Approval && !p.Rerun && p.Break == "" && !g.Stop(p) && g.Allowed(p) {
		return engine.Verdict{Action: engine.Proceed, By: "allowed for this session"}, nil
	}
	req := gateRequest{pending: p, reply: make(chan engine.Verdict, 1)}
	if f := g.preview.Load(); f != nil && p.ToolCall != nil && p.Question == nil {
		req.preview, _ = (*f)(p.ToolCall)
	}
	select {
	case g.requests <- req:
	case <-ctx.Done():
		return engine.Verdict{}, ctx.Err()
	}
	select {
	case v := <-req.reply:
		return v, nil
	case <-ctx.Done():
		return engine.Verdict{}, ctx.Err()
	}
}

// Watching implements bus.Watcher: a run this console only watches waits
// at p for someone else's answer; the console says so. It never blocks the
// caller for long: a console that does not take it in 5 s misses it.
func (g *Gate) Watching(p engine.Pending) {
	go func() {
		t := time.NewTimer(5 * time.Second)
		defer t.Stop()
		select {
		case g.requests <- gateRequest{pending: p, watchOnly: true}:
		case <-t.C:
		}
	}()
}

// Answered implements bus.Answered: the run on a worker said whether it
// took this console's answer at p. One not taken is a note (the console
// gives the answer again when the run asks again); it never blocks the
// caller for long.
func (g *Gate) Answered(p engine.Pending, taken bool, why string) {
	if taken {
		return
	}
	go func() {
		t := time.NewTimer(5 * time.Second)
		defer t.Stop()
		select {
		case g.requests <- gateRequest{pending: p, untaken: why}:
		case <-t.C:
		}
	}()
}
