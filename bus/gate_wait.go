package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/nats-io/nats.go"
)

// gateWait reads the replies to one pause (RemoteGate.Wait).
type gateWait struct {
	g         *RemoteGate
	ctx, wctx context.Context
	id        string // the pause's nonce (gateNonce)
	step      int
	data      []byte // the pause, as asked
	refused   []string
}

// offline says whether err is the connection's being away (the request is
// asked again after a while).
func offline(err error) bool {
	return errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrDisconnected) || errors.Is(err, nats.ErrReconnectBufExceeded)
}

// pause waits before asking again, when nobody is there to ask.
func (w *gateWait) pause() {
	t := time.NewTimer(w.g.retry)
	select {
	case <-t.C:
	case <-w.wctx.Done():
		t.Stop()
	}
}

// request asks for the pause, and reads the replies until one is taken
// (its verdict) or the pause is to be asked again (again: no console, no
// answer within Ask; the replies to an earlier request are dropped, so one
// answer takes effect). Each ask has an inbox of its own (under one
// subscription): a user may reply once to each request it received (NATS
// response permissions), and a second delivery on the same inbox would use
// up the console's one reply, its answer dropped by the server unsaid. A
// reply that decides nothing (refused, or a console that may only watch or
// goes away) does not end the reading: the pause is asked again a second
// later, on a new inbox, and the right answer is read whenever it comes.
func (w *gateWait) request() (v engine.Verdict, again bool, err error) {
	g := w.g
	ask := g.Ask
	if ask <= 0 {
		ask = DefaultAsk
	}
	base := g.nc.NewInbox()
	sub, err := g.nc.SubscribeSync(base + ".*")
	if err != nil {
		return engine.Verdict{}, false, fmt.Errorf("bus: gate of session %s: %w", g.session, err)
	}
	defer sub.Unsubscribe()
	rctx, cancel := context.WithTimeout(w.wctx, ask)
	defer cancel()
	var asked int
	var reask time.Time // when to ask again; zero: not before Ask
	for {
		if asked == 0 || !reask.IsZero() && !time.Now().Before(reask) {
			asked++
			reask = time.Time{}
			if err := g.nc.PublishRequest(GateSubject(g.session), fmt.Sprintf("%s.%d", base, asked), w.data); err != nil && !offline(err) {
				return engine.Verdict{}, false, fmt.Errorf("bus: gate of session %s: %w", g.session, err)
			}
		}
		msg, err := w.next(rctx, sub, reask)
		switch {
		case w.ctx.Err() != nil:
			return engine.Verdict{}, false, w.ctx.Err()
		case w.wctx.Err() != nil:
			return engine.Verdict{}, false, &noConsoleError{g.session, g.timeout}
		case rctx.Err() != nil: // no answer to this request: ask again
			return engine.Verdict{}, true, nil
		case errors.Is(err, context.DeadlineExceeded): // time to ask again
			continue
		case errors.Is(err, nats.ErrNoResponders) || err == nil && msg.Header.Get("Status") == "503":
			w.pause() // no console listens
			return engine.Verdict{}, true, nil
		case err != nil:
			return engine.Verdict{}, false, fmt.Errorf("bus: gate of session %s: %w", g.session, err)
		}
		v, verdict, err := w.reply(msg)
		if err != nil || verdict {
			return v, false, err
		}
		if reask.IsZero() {
			reask = time.Now().Add(g.retry) // for a console that may answer, or one come since
		}
	}
}

// next is the next reply on sub, read until ctx ends or, when it is set,
// until reask.
func (w *gateWait) next(ctx context.Context, sub *nats.Subscription, reask time.Time) (*nats.Msg, error) {
	if !reask.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, reask)
		defer cancel()
	}
	return sub.NextMsgWithContext(ctx)
}

// GateTaken is what a run says to a console that sent its answer as a
// request: whether the answer was taken, and why not. A console whose
// answer gets no word back (the run asked again, or another's answer was
// taken, or the server dropped it) knows it was not taken.
type GateTaken struct {
	Taken bool   `json:"taken"`
	Why   string `json:"why,omitempty"`
}

// reply judges one reply (judge) and tells its sender, when it asks on an
// inbox, that it was taken. Only a signed answer that was taken hears
// back: the run publishes with the worker's permissions, and a reply
// subject is the sender's to choose (a refused reply naming a KV key or
// a journal would have the worker write there); a console that hears
// nothing knows its answer was not taken.
func (w *gateWait) reply(msg *nats.Msg) (v engine.Verdict, verdict bool, err error) {
	v, verdict, err = w.judge(msg)
	if (verdict || err != nil) && strings.HasPrefix(msg.Reply, nats.InboxPrefix) {
		b, _ := json.Marshal(GateTaken{Taken: true})
		msg.Respond(b)
	}
	return v, verdict, err
}

// judge judges one reply: its verdict (verdict set), or nothing (a
// console that goes away or may only watch says so, or the reply is
// refused: its refusal kept), or the console's error.
func (w *gateWait) judge(msg *nats.Msg) (v engine.Verdict, verdict bool, err error) {
	g := w.g
	var r GateReply
	if err := json.Unmarshal(msg.Data, &r); err != nil {
		if g.Steer.check(gateKind, g.session, w.id, msg) != nil {
			w.refused = refuse(w.refused, fmt.Sprintf("an answer to the pause at step %d that is not JSON and not signed", w.step))
			return engine.Verdict{}, false, nil
		}
		return engine.Verdict{}, false, fmt.Errorf("bus: gate of session %s: the console's answer is not JSON: %w", g.session, err)
	}
	if r.Again { // for another console; signed or not, it decides nothing
		return engine.Verdict{}, false, nil
	}
	if err := g.Steer.check(gateKind, g.session, w.id, msg); err != nil {
		w.refused = refuse(w.refused, fmt.Sprintf("an answer (%s) to the pause at step %d: %v", r.what(), w.step, err))
		return engine.Verdict{}, false, nil
	}
	if r.Error != "" {
		return engine.Verdict{}, false, fmt.Errorf("bus: gate of session %s: the console: %s", g.session, r.Error)
	}
	v, err = r.verdict()
	if err != nil {
		return engine.Verdict{}, false, fmt.Errorf("bus: gate of session %s: the console's answer: %w", g.session, err)
	}
	if r.Release {
		g.released.Store(true)
	}
	v.Refused = w.refused
	return v, true, nil
}
