package console

import (
	"context"
	"errors"
	"slices"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/ui"
)

// Followed is a session that the console follows read-only (agentty
// watch): its journal so far, then its live events.
type Followed struct {
	ID   string
	Past []engine.Event
	// Live are the events after Past, none twice; closed when following
	// ends.
	Live   <-chan engine.Event
	Notice string
	// Answer makes the console's gate answer the pauses the session's runs
	// ask for; it returns how to stop answering.
	Answer func(engine.Gate) (func(), error)
	// Hold and Release bracket the console: what is said on stderr
	// meanwhile waits until it ends.
	Hold, Release func()
	// SendAnswer answers the question the session's run waits on (a
	// worker's run: agentty answer's way), or, refused, tells it none
	// comes; nil: questions are only shown.
	SendAnswer func(answer string, refused bool) error
}

// Follow shows f in the console, read-only, in step mode (its pauses are
// answered here), until the person quits or ctx ends.
func Follow(ctx context.Context, f Followed, getenv func(string) string) error {
	gate := ui.NewGate(true)
	stop, err := f.Answer(gate)
	if err != nil {
		return err
	}
	defer stop()
	live := f.Live
	if f.SendAnswer != nil {
		live = askOnQuestions(ctx, f.Past, f.Live, gate, f.SendAnswer)
	}
	cfg := ui.Config{
		Events: f.Past, Gate: gate, Model: "-", Style: "dark", Notice: f.Notice, Grace: ui.PauseGrace,
		Follow: &ui.Follow{Session: f.ID, Events: live, Why: "watching " + f.ID + ": read-only"},
	}
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		cfg.Style = "notty"
	}
	f.Hold()
	err = ui.Run(ui.New(cfg), tea.WithContext(ctx))
	f.Release()
	if err != nil && ctx.Err() == nil && !errors.Is(err, tea.ErrProgramKilled) {
		return err
	}
	return nil
}

// askOnQuestions passes the events of live on, and puts each question the
// run asks (question_asked, in past still unanswered or in live) to the
// person in the pause bar of gate; the answer goes to the run with send. A
// question answered elsewhere first (question_answered) is withdrawn.
func askOnQuestions(ctx context.Context, past []engine.Event, live <-chan engine.Event, gate *ui.Gate, send func(string, bool) error) <-chan engine.Event {
	out := make(chan engine.Event)
	q := &questions{ctx: ctx, gate: gate, send: send, open: map[string]context.CancelFunc{}}
	for _, ev := range past {
		q.note(ev, false)
	}
	q.askOpen()
	go func() {
		defer close(out)
		defer q.close()
		for ev := range live {
			q.note(ev, true)
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// questions are the questions of a followed run, asked in the pause bar.
type questions struct {
	ctx     context.Context
	gate    *ui.Gate
	send    func(string, bool) error
	open    map[string]context.CancelFunc // asked, by run/call
	waiting []engine.Event                // asked in the journal, not yet answered
}

// note follows ev: a question is asked (now, when live), an answer
// withdraws it.
func (q *questions) note(ev engine.Event, live bool) {
	switch d := ev.Data.(type) {
	case *engine.QuestionAsked:
		if live {
			q.ask(ev, d)
		} else {
			q.waiting = append(q.waiting, ev)
		}
	case *engine.QuestionAnswered:
		key := ev.Run + "/" + d.ID
		q.waiting = slices.DeleteFunc(q.waiting, func(w engine.Event) bool { return w.Run+"/"+w.Data.(*engine.QuestionAsked).ID == key })
		if cancel := q.open[key]; cancel != nil {
			cancel()
			delete(q.open, key)
		}
	}
}

// askOpen asks the journal's questions that are still waiting.
func (q *questions) askOpen() {
	for _, ev := range q.waiting {
		q.ask(ev, ev.Data.(*engine.QuestionAsked))
	}
	q.waiting = nil
}

// ask puts the question in the pause bar; its answer goes to the run.
func (q *questions) ask(ev engine.Event, d *engine.QuestionAsked) {
	qctx, cancel := context.WithCancel(q.ctx)
	q.open[ev.Run+"/"+d.ID] = cancel
	p := engine.Pending{Session: ev.Session, Run: ev.Run, Agent: ev.Agent, Step: ev.Step, At: engine.Act,
		ToolCall: &engine.ToolCall{ID: d.ID, Name: engine.AskUserTool}, Question: &d.Question}
	go func() {
		if v, err := q.gate.Wait(qctx, p); err == nil {
			q.send(v.Answer, v.Action != engine.Proceed) // taken by the run, or it was answered meanwhile
		}
	}()
}

func (q *questions) close() {
	for _, cancel := range q.open {
		cancel()
	}
}
