package engine

import (
	"context"
	"sync"
	"sync/atomic"
)

// callCtx is the context of a tool call's attempt in a run whose own
// context can never be cancelled (its Done is nil, as Background's is):
// what context.WithCancel would give, for less (one small allocation, no
// channel until a tool asks for Done, and a cancel that takes no lock
// while nobody waits on it). A run whose context can be cancelled gives
// its tools context.WithCancel's (run.attempt).
//
// It is a context.Context for every use: Done, Err, Value and Deadline as
// the standard one's, context.Cause is its Err (its parent holds no
// canceller whose cause Cause could find instead), and a context made from
// it (WithCancel, AfterFunc) follows it through its AfterFunc method.
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

// afterCall is one function of AfterFunc; f is nil once it ran or was
// stopped.
type afterCall struct{ f func() }

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
	if c.state.Load()&cancelled != 0 {
		return context.Canceled
	}
	return nil
}

// cancel ends the context, as a context.CancelFunc does: with one atomic
// operation when nothing waits on it.
func (c *callCtx) cancel() {
	if c.state.CompareAndSwap(0, cancelled) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.Or(cancelled)&cancelled != 0 {
		return // cancelled before
	}
	if c.done != nil {
		close(c.done)
	}
	for _, a := range c.after {
		if f := a.f; f != nil {
			a.f = nil
			go f()
		}
	}
	c.after = nil
}

// AfterFunc arranges for f to run on its own goroutine once the context
// is done, as context.AfterFunc does; stop keeps it from running, and
// reports whether it did.
func (c *callCtx) AfterFunc(f func()) (stop func() bool) {
	a := &afterCall{f: f}
	c.mu.Lock()
	if c.state.Or(waited)&cancelled != 0 {
		a.f = nil
		go f()
	} else {
		c.after = append(c.after, a)
	}
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		stopped := a.f != nil
		a.f = nil
		return stopped
	}
}

func (c *callCtx) String() string { return "engine.callCtx" }
