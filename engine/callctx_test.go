package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

type ctxKey struct{}

// TestCallCtx checks a call's light context against what
// context.WithCancel gives: Done, Err, Cause, Value, and contexts made
// from it (WithCancel, WithTimeout, AfterFunc), before and after cancel.
func TestCallCtx(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	c := &callCtx{Context: parent}
	ctx, cancel := context.Context(c), c.cancel
	if ctx.Err() != nil || context.Cause(ctx) != nil {
		t.Fatalf("before cancel: Err %v, Cause %v", ctx.Err(), context.Cause(ctx))
	}
	if ctx.Value(ctxKey{}) != "v" {
		t.Fatal("the parent's value is lost")
	}
	if _, ok := ctx.Deadline(); ok {
		t.Fatal("a deadline out of nowhere")
	}
	done := ctx.Done()
	child, childCancel := context.WithCancel(ctx)
	defer childCancel()
	timed, timedCancel := context.WithTimeout(ctx, time.Hour)
	defer timedCancel()
	ran := make(chan struct{})
	context.AfterFunc(ctx, func() { close(ran) })
	stopped := context.AfterFunc(ctx, func() { t.Error("a stopped AfterFunc ran") })
	if !stopped() {
		t.Fatal("stop before cancel reported false")
	}
	select {
	case <-done:
		t.Fatal("done before cancel")
	default:
	}

	cancel()
	cancel() // a second cancel does nothing
	for name, c := range map[string]context.Context{"call": ctx, "WithCancel child": child, "WithTimeout child": timed} {
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: not done after cancel", name)
		}
		if !errors.Is(c.Err(), context.Canceled) || !errors.Is(context.Cause(c), context.Canceled) {
			t.Errorf("%s: Err %v, Cause %v, want canceled", name, c.Err(), context.Cause(c))
		}
	}
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("AfterFunc did not run")
	}
	if d := ctx.Done(); d != done {
		t.Error("Done changed")
	}
	// After cancel: Done asked for the first time is closed, AfterFunc
	// runs at once.
	lc := &callCtx{Context: context.Background()}
	late := context.Context(lc)
	lc.cancel()
	select {
	case <-late.Done():
	default:
		t.Error("Done after cancel is not closed")
	}
	again := make(chan struct{})
	context.AfterFunc(late, func() { close(again) })
	select {
	case <-again:
	case <-time.After(5 * time.Second):
		t.Fatal("AfterFunc after cancel did not run")
	}

	// A child made with WithCancel is cancelled before cancel returns, as
	// under context.WithCancel; contexts made and cancelled leave nothing
	// behind.
	for range 100 {
		p := &callCtx{Context: context.Background()}
		child, childCancel := context.WithCancel(p)
		p.cancel()
		if child.Err() == nil {
			t.Fatal("a child was not cancelled with its parent")
		}
		childCancel()
	}
	p := &callCtx{Context: context.Background()}
	for range 1000 {
		_, childCancel := context.WithCancel(p)
		childCancel()
	}
	if n := len(p.after); n != 0 {
		t.Errorf("%d functions kept for children made and cancelled", n)
	}
}
