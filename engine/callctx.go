package engine

import (
	"context"
	"sync"
)

// callCtx is the context of a tool call's attempt in a run whose own
// context can never be cancelled (its Done is nil, as Background's is):
// what context.WithCancel would give, at a third of the cost (one small
// allocation, no channel until a tool asks for Done, and a cancel that
// only takes a lock when nobody waits). A run whose context can be
// cancelled gives its tools context.WithCancel's.
//
// It is a context.Context for every use: Done, Err, Value and Deadline as
// the standard one's, context.Cause is its Err (its parent holds no
// canceller whose cause Cause could find instead), and a context made from
// it (WithCancel, AfterFunc) follows it through its AfterFunc method.
type callCtx struct {
	context.Context // the run's
	mu              sync.Mutex
	done            chan struct{} // made when first asked for
	err             error
	after           []*afterCall
}

// afterCall is one function of AfterFunc; f is nil once it ran or was
// stopped.
type afterCall struct{ f func() }

// newCallCtx returns the context of an attempt, and its cancel function:
// a callCtx when the run's context cannot be cancelled, else
// context.WithCancel's.
func newCallCtx(parent context.Context) (context.Context, context.CancelFunc) {
	if parent.Done() != nil {
		return context.WithCancel(parent)
	}
	c := &callCtx{Context: parent}
	return c, c.cancel
}

func (c *callCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	return c.done
}

func (c *callCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// cancel ends the context, as a context.CancelFunc does.
func (c *callCtx) cancel() {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = context.Canceled
	if c.done != nil {
		close(c.done)
	}
	after := c.after
	c.after = nil
	for _, a := range after {
		if f := a.f; f != nil {
			a.f = nil
			go f()
		}
	}
	c.mu.Unlock()
}

// AfterFunc arranges for f to run on its own goroutine once the context
// is done, as context.AfterFunc does; stop keeps it from running, and
// reports whether it did.
func (c *callCtx) AfterFunc(f func()) (stop func() bool) {
	a := &afterCall{f: f}
	c.mu.Lock()
	if c.err != nil {
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
