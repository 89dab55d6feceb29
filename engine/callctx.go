package engine

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// callCtx is the context of a tool call's attempt in a run whose own
// context can never be cancelled (its Done is nil, as Background's is):
// what context.WithCancel would give, for less (one small allocation, no
// cancel closure, no channel until a tool asks for Done, and a cancel that
// takes no lock while nobody waits on it). A run whose context can be
// cancelled gives its tools context.WithCancel's (run.attempt).
//
// It is a context.Context for every use: Done, Err, Value and Deadline as
// the standard one's, context.Cause is its Err (its parent holds no
// canceller whose cause Cause could find instead), and a context made from
// it follows it through its AfterFunc method: one made by WithCancel or
// WithTimeout is cancelled before cancel returns, as a child of
// WithCancel's is, and context.AfterFunc's function runs on a goroutine of
// its own.
type callCtx struct {
	context.Context // the run's
	// state has cancelled set once cancelled, and waited once Done or
	// AfterFunc was called; mu guards done and after.
	state atomic.Uint32
	mu    sync.Mutex
	done  chan struct{} // made when first asked for
	after []*afterCall
}

const (
	cancelled = 1 << iota
	waited
)

// afterCall is one function of AfterFunc; ran is set once it ran or was
// stopped.
type afterCall struct {
	f   func()
	ran bool
}

func (c *callCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.state.Or(waited)&cancelled != 0 {
			close(c.done)
		}
	}
	return c.done
}

func (c *callCtx) Err() error {
	s := c.state.Load()
	if s&cancelled == 0 {
		return nil
	}
	if s&waited != 0 {
		// Done is closed, as Err says, once cancel (which holds mu
		// while it closes it) is through.
		c.mu.Lock()
		c.mu.Unlock() // an empty critical section, on purpose
	}
	return context.Canceled
}

// cancel ends the context, as a context.CancelFunc does: with one atomic
// operation when nothing waits on it.
func (c *callCtx) cancel() {
	if c.state.CompareAndSwap(0, cancelled) {
		return
	}
	c.mu.Lock()
	if c.state.Or(cancelled)&cancelled != 0 {
		c.mu.Unlock()
		return // cancelled before
	}
	if c.done != nil {
		close(c.done)
	}
	after := c.after
	c.after = nil
	for _, a := range after {
		a.ran = true
	}
	c.mu.Unlock()
	for _, a := range after {
		a.f()
	}
}

// AfterFunc is how contexts made from this one follow it (the context
// package looks for it): f runs once the context is done, on the goroutine
// that cancels it, or, when it is done already, on a goroutine of its own
// (context.WithCancel calls AfterFunc holding the lock that f takes); stop
// keeps it from running, and reports whether it did.
func (c *callCtx) AfterFunc(f func()) (stop func() bool) {
	a := &afterCall{f: f}
	c.mu.Lock()
	if c.state.Or(waited)&cancelled != 0 {
		a.ran = true
		c.mu.Unlock()
		go f()
	} else {
		c.after = append(c.after, a)
		c.mu.Unlock()
	}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if a.ran {
			return false
		}
		a.ran = true
		c.after = slices.DeleteFunc(c.after, func(b *afterCall) bool { return b == a })
		return true
	}
}

func (c *callCtx) String() string { return "engine.callCtx" }
