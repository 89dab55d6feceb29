package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// request asks for the pause once, on an inbox of its own, and reads the
// replies until one is taken (its verdict) or the pause is to be asked
// again (again: no console, the console went away, no answer within Ask;
// the replies to an earlier request are dropped, so one answer takes
// effect). A refused reply (anyone on the bus may send one) does not end
// the reading: the request is sent again on the same inbox, so that the
// console that may answer gets it even when the refused sender took it
// from the consoles' queue group, and the right answer is read when it
// comes.
func (w *gateWait) request() (v engine.Verdict, again bool, err error) {
	g := w.g
	ask := g.Ask
	if ask <= 0 {
		ask = DefaultAsk
	}
	inbox := g.nc.NewInbox()
	sub, err := g.nc.SubscribeSync(inbox)
	if err != nil {
		return engine.Verdict{}, false, fmt.Errorf("bus: gate of session %s: %w", g.session, err)
	}
	defer sub.Unsubscribe()
	rctx, cancel := context.WithTimeout(w.wctx, ask)
	defer cancel()
	for {
		if err := g.nc.PublishRequest(GateSubject(g.session), inbox, w.data); err != nil && !offline(err) {
			return engine.Verdict{}, false, fmt.Errorf("bus: gate of session %s: %w", g.session, err)
		}
		msg, err := sub.NextMsgWithContext(rctx)
		switch {
		case w.ctx.Err() != nil:
			return engine.Verdict{}, false, w.ctx.Err()
		case w.wctx.Err() != nil:
			return engine.Verdict{}, false, &noConsoleError{g.session, g.timeout}
		case errors.Is(err, context.DeadlineExceeded): // no answer to this request: ask again
			return engine.Verdict{}, true, nil
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
		w.pause() // then asked again on this inbox, for a console that may answer
	}
}

// reply judges one reply: its verdict (verdict set), or nothing (a
// console that goes away or may only watch says so, or the reply is
// refused: its refusal kept), or the console's error.
func (w *gateWait) reply(msg *nats.Msg) (v engine.Verdict, verdict bool, err error) {
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
