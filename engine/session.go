package engine

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"
)

// Fact is one entry of memory: a key, its value and the step that wrote it.
// Agent names the agent whose run wrote it ("" for the top-level run's
// own settings or the person).
type Fact struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Step  int    `json:"step"`
	Agent string `json:"agent,omitempty"`
}

// Session is the conversation that runs belong to: its history, memory, step
// count and token usage persist across runs. A Session's state changes only
// through Apply, so replaying a journal of its events rebuilds it exactly.
//
// A Session is used by one run at a time; Engine.Run refuses a second
// concurrent run on the same Session. Read its fields only while no run is
// going on, or from the run's own events.
//
// History, Steps, Runs and Usage are read-only views for callers: they are
// exported to be read, and only Apply may change them (the token prefix sums
// behind the context budget are kept in step with History there). To change
// a session, apply an event; to change memory, use ChangeMemory.
type Session struct {
	ID      string
	History []Message
	// Steps is the number of the last step started in this session; step
	// numbers are unique within a session.
	Steps int
	// Runs counts the runs started.
	Runs  int
	Usage Usage
	// budgetFrom is Usage when the top-level run going on started: its
	// budget counts from there.
	budgetFrom Usage
	// Agent is the agent the session's runs run as: the last run's, as
	// its run_started or a handoff said.
	Agent string

	// subs holds the state of every sub-run, by run id; memory, usage and
	// step numbers are the session's, shared with them.
	subs map[string]*Session

	// summary stands for History[:upto] in requests (compaction); its
	// tokens are estimated once.
	upto          int
	summary       string
	summaryTokens int
	// Model is the model the person picked for the session's next runs
	// (model_changed), "" when none was picked.
	Model string

	// bound is about where the history ends if the run going on uses
	// every step its limit allows (reserve, grow).
	bound int
	// users indexes History's user messages up to indexed (userTurns).
	users   []int
	indexed int
	// prompts are the hashes of the prompts journaled (prompt.go).
	prompts []Hash

	memory []Fact // replaced, never modified in place: a Request may hold it
	// tokens[i] is the estimated token count of History[:i].
	tokens []int
	// pending collects the results of the current step's tool calls until
	// all of them are in, so that history keeps call order.
	pending     []Message
	callState   []uint8
	pendingLeft int
	// pausedCall is the call of the latest pause before a tool call, and
	// edited the calls of this step whose arguments the person edited
	// (edited.go).
	pausedCall string
	edited     []string
	// settings are what the session was last worked on with, nextSettings
	// what its next run_started carries (settings.go).
	settings     Settings
	nextSettings *Settings
	// redacted are the calls of the last decision whose arguments held a
	// secret (Decided.Redacted): the journal has them without it, so a
	// continued run cannot run them as they were asked for.
	redacted []string
	// run is the state of the last run; Open reports whether it finished.
	run  RunState
	busy atomic.Bool
	// hookStarted is set once the session's SessionStart hooks ran in
	// this process.
	hookStarted atomic.Bool
}

// RunState describes the last run of a session, as far as its events tell.
type RunState struct {
	ID   string
	Task string
	Turn int // decisions made
	Step int // the number of its last step
	// HandoffTurn is Turn at the run's last handoff: the agent's step
	// limit counts from there.
	HandoffTurn int
	Finished    bool
	Stop        StopReason
	// Answer and Error are those of its run_finished.
	Answer, Error string
	// Request is the queued request the run carries out, if any.
	Request string
	// usedBefore is the session's Usage when the run started, and spent
	// what the run's own decisions cost: a run continued after a crash
	// counts its budgets (the run's, its agent's) from there, not from
	// where it was continued.
	usedBefore, spent Usage
}

// Call states of the current step's tool calls.
const (
	callWaiting  = iota // no result, not started
	callStarted         // started, no result: interrupted if the run died
	callFinished        // its result is in pending
)

// NewSession returns an empty session with the given id.
func NewSession(id string) *Session {
	return &Session{ID: id, tokens: []int{0}}
}

// Memory returns the facts in the order they were first written. The slice
// must not be modified.
func (s *Session) Memory() []Fact { return s.memory }

// Recall returns the value of key.
func (s *Session) Recall(key string) (string, bool) {
	for _, f := range s.memory {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// LastRun describes the session's last run.
func (s *Session) LastRun() RunState { return s.run }

// Unfinished returns the tool calls of the last step that have no result,
// and of those, the ones that had started: a run that died while they ran.
// Continuing the run runs the former, and the latter only with approval.
func (s *Session) Unfinished() (waiting, started []ToolCall) {
	if s.pendingLeft == 0 {
		return nil, nil
	}
	calls := s.History[len(s.History)-1].ToolCalls
	for i, st := range s.callState {
		if st != callFinished {
			waiting = append(waiting, calls[i])
		}
		if st == callStarted {
			started = append(started, calls[i])
		}
	}
	return waiting, started
}

// Interrupted reports whether the last run stopped without a run_finished
// event (the process died), so that it can be continued.
func (s *Session) Interrupted() bool { return s.run.ID != "" && !s.run.Finished }

// tokensOf returns the estimated tokens of History[i:j].
func (s *Session) tokensOf(i, j int) int { return s.tokens[j] - s.tokens[i] }

// appendMessage appends a user's or the assistant's message.
func (s *Session) appendMessage(role Role, content string, calls []ToolCall) {
	s.appendHistory(&Message{Role: role, Content: content, ToolCalls: calls})
}

// Apply changes the session as the event says. The engine applies each event
// as it emits it; replaying a journal applies the same events to a fresh
// Session. Events of other sessions and of unknown kinds are ignored.
//
// A sub-run's events (ParentRun set) change the sub-run's own state (see
// SubRun), and the session's memory, usage and step count.
func (s *Session) Apply(ev Event) error { return s.apply(&ev) }

// apply is Apply on an event it does not keep or change. The events every
// step has are handled here; the rest in applyOther, so that this frame,
// which is on the stack of every run's deepest calls, stays small.
func (s *Session) apply(ev *Event) error {
	if p, ok := ev.Data.(*Prompt); ok { // the session's, whichever run's
		s.notePrompt(p)
		return nil
	}
	if ev.ParentRun != "" {
		return s.applyTo(s.subs[ev.Run], ev)
	}
	switch d := ev.Data.(type) {
	case *StepStarted:
		if ev.Step > s.Steps {
			s.Steps = ev.Step
		}
		s.run.Turn = d.Turn
		s.run.Step = ev.Step
	case *Decided:
		s.flushPending()
		s.edited = s.edited[:0]
		s.run.Turn++
		s.redacted = d.Redacted
		s.appendMessage(RoleAssistant, d.Text, d.ToolCalls)
		if n := len(d.ToolCalls); n > 0 {
			s.pending = append(s.pending[:0], make([]Message, n)...)
			s.callState = append(s.callState[:0], make([]uint8, n)...)
			s.pendingLeft = n
		}
	case *ToolStarted:
		if d.Index >= 0 && d.Index < len(s.callState) && s.callState[d.Index] == callWaiting {
			s.callState[d.Index] = callStarted
		}
	case *ToolFinished:
		if d.Index < 0 || d.Index >= len(s.callState) || s.callState[d.Index] == callFinished {
			return fmt.Errorf("engine: tool_finished for call %d (%s) that is not pending", d.Index, d.ID)
		}
		m := &s.pending[d.Index]
		m.Role, m.Content, m.ToolCallID, m.Name, m.Structured = RoleTool, d.Result, d.ID, d.Name, d.Structured
		if len(s.edited) > 0 && slices.Contains(s.edited, d.ID) {
			m.Content += EditedNote
		}
		s.callState[d.Index] = callFinished
		s.pendingLeft--
		if s.pendingLeft == 0 {
			s.flushPending()
		}
	case *UsageRecorded:
		s.Usage.Add(d.Usage)
		s.run.spent.Add(d.Usage)
	case *StepFinished:
		s.flushPending()
	case *ModelRequest, *ContextTrimmed:
	default:
		return s.applyOther(ev)
	}
	return nil
}

// applyOther is apply for the events that not every step has.
func (s *Session) applyOther(ev *Event) error {
	switch d := ev.Data.(type) {
	case *RunStarted:
		s.flushPending()
		s.Runs++
		s.run = RunState{ID: ev.Run, Task: d.Task, Request: d.Request, usedBefore: s.Usage}
		if d.Settings != nil {
			s.settings, s.nextSettings = *d.Settings, nil
		}
		s.Agent = ev.Agent
		if d.Context != "" && !d.Withheld { // before the task: the task stays the last word
			s.appendMessage(RoleUser, hookContextMessage(d.Context), nil)
		}
		if !d.Withheld {
			s.appendMessage(RoleUser, d.Task, nil)
		}
	case *HookRun:
		if d.Feedback != "" {
			s.appendMessage(RoleUser, d.Feedback, nil)
		}
	case *Settings:
		s.settings, s.nextSettings = *d, nil
	case *Handoff:
		s.Agent = d.To
		s.run.HandoffTurn = s.run.Turn
	case *ContextCompacted:
		if d.Upto < 0 || d.Upto > len(s.History) {
			return fmt.Errorf("engine: context_compacted up to message %d of a history of %d", d.Upto, len(s.History))
		}
		s.upto, s.summary, s.summaryTokens = d.Upto, d.Summary, EstimateTokens(d.Summary)
		s.Usage.Add(d.Usage)
	case *ModelChanged:
		s.Model = d.Model
	case *GatePaused:
		s.editable(d)
	case *GateResumed:
		s.applyEdit(d)
	case *AnswerRejected:
		s.appendMessage(RoleUser, d.Message, nil)
	case *MemoryChanged:
		s.applyMemory(d, ev.Step, ev.Agent)
	case *RunFinished:
		s.flushPending()
		if d.Partial != "" {
			s.appendMessage(RoleAssistant, d.Partial+CutOffNote, nil)
		}
		s.run.Finished = true
		s.run.Stop = d.StopReason
		s.run.Answer, s.run.Error = d.Answer, d.Error
	}
	return nil
}

// applyTo applies a sub-run's event: to the sub-run's state sub (nil: none
// yet), and what it shares to the session's.
func (s *Session) applyTo(sub *Session, ev *Event) error {
	switch d := ev.Data.(type) {
	case *Prompt: // the session's, whichever run journaled it
		s.notePrompt(d)
		return nil
	case *RunStarted:
		if sub == nil {
			if s.subs == nil {
				s.subs = map[string]*Session{}
			}
			sub = NewSession(s.ID)
			s.subs[ev.Run] = sub
		}
	case *MemoryChanged:
		s.applyMemory(d, ev.Step, ev.Agent)
		return nil
	case *StepStarted:
		if ev.Step > s.Steps {
			s.Steps = ev.Step
		}
	case *UsageRecorded:
		s.Usage.Add(d.Usage)
	case *ContextCompacted:
		s.Usage.Add(d.Usage)
	}
	if sub == nil {
		if ev.Data == nil || !ev.Known() {
			return nil
		}
		return fmt.Errorf("engine: %s of sub-run %s, which has no run_started", ev.Kind, ev.Run)
	}
	own := *ev
	own.ParentRun = "" // the sub-run's own fold
	return sub.apply(&own)
}

// SubRun returns the state of the sub-run with the given id: its history,
// its steps and whether it finished. It must be read only as Session says.
func (s *Session) SubRun(id string) (*Session, bool) {
	sub, ok := s.subs[id]
	return sub, ok
}

// CutOffNote ends the history message of an answer the person cancelled
// while it streamed, so the model knows it was cut off.
const CutOffNote = "\n\n[cut off: the person cancelled this answer]"

// InterruptedResult is the tool result recorded for a call whose run ended
// (a crash, a kill) before it finished, when the session moves on without
// continuing that run.
const InterruptedResult = "error: this tool call was interrupted and has no result"

// flushPending appends the tool results of the step in call order. A call
// with no result (an interrupted step that a new run moves past) gets
// InterruptedResult, so that every tool call keeps its answer.
func (s *Session) flushPending() {
	if len(s.pending) == 0 {
		return
	}
	calls := s.History[len(s.History)-1].ToolCalls
	for i := range s.pending {
		m := &s.pending[i]
		if s.callState[i] != callFinished {
			*m = Message{Role: RoleTool, Content: InterruptedResult, ToolCallID: calls[i].ID, Name: calls[i].Name}
		}
		s.appendHistory(m)
	}
	clear(s.pending)
	s.pending, s.callState, s.pendingLeft = s.pending[:0], s.callState[:0], 0
}

func (s *Session) applyMemory(d *MemoryChanged, step int, agent string) {
	i := slices.IndexFunc(s.memory, func(f Fact) bool { return f.Key == d.Key })
	switch d.Op {
	case MemorySet:
		m := slices.Clone(s.memory)
		f := Fact{Key: d.Key, Value: d.Value, Step: step, Agent: agent}
		if i >= 0 {
			m[i] = f
		} else {
			m = append(m, f)
		}
		s.memory = m
	case MemoryDelete:
		if i >= 0 {
			s.memory = slices.Delete(slices.Clone(s.memory), i, i+1)
		}
	}
}

// ChangeMemory applies a memory change made outside a run (by the person in
// the console, or by the program) and reports it to sink as a
// memory_changed event, so that a journal keeps it. It fails with ErrBusy
// while a run is going on: a run's memory changes come from its tools.
func (s *Session) ChangeMemory(c MemoryChanged, sink Sink) (Event, error) {
	if !s.busy.CompareAndSwap(false, true) {
		return Event{}, ErrBusy
	}
	defer s.busy.Store(false)
	if c.Key == "" {
		return Event{}, fmt.Errorf("engine: memory change with no key")
	}
	if c.Op != MemorySet && c.Op != MemoryDelete {
		return Event{}, fmt.Errorf("engine: memory change: unknown op %q", c.Op)
	}
	ev := Event{V: SchemaVersion, Session: s.ID, Run: s.run.ID, Step: s.Steps, Phase: Observe, Kind: KindMemoryChanged, Time: time.Now(), Data: &c}
	if sink != nil {
		if err := sink.Emit(ev); err != nil {
			return Event{}, err
		}
		if f, ok := sink.(Flusher); ok {
			if err := f.Flush(); err != nil {
				return Event{}, err
			}
		}
	}
	return ev, s.Apply(ev)
}

// SwitchAgent makes to the agent the session's next runs run as, when the
// person picks one (--agent) for a session whose runs ran as another, and
// reports it to sink as a handoff event (no call), so that a journal keeps
// it. It fails with ErrBusy while a run is going on.
func (s *Session) SwitchAgent(to string, sink Sink) (Event, error) {
	if !s.busy.CompareAndSwap(false, true) {
		return Event{}, ErrBusy
	}
	defer s.busy.Store(false)
	ev := Event{V: SchemaVersion, Session: s.ID, Run: s.run.ID, Agent: s.Agent, Step: s.Steps, Kind: KindHandoff, Time: time.Now(), Data: &Handoff{From: s.Agent, To: to}}
	if sink != nil {
		if err := sink.Emit(ev); err != nil {
			return Event{}, err
		}
		if f, ok := sink.(Flusher); ok {
			if err := f.Flush(); err != nil {
				return Event{}, err
			}
		}
	}
	return ev, s.Apply(ev)
}

// Compacted returns the summary that stands for the first upto messages of
// History in requests (0 and "" when nothing is compacted).
func (s *Session) Compacted() (upto int, summary string) { return s.upto, s.summary }

// ChangeModel records that the session's next runs use model (the
// person's choice), as a model_changed event to sink, so that a journal
// keeps it. It fails with ErrBusy while a run is going on.
func (s *Session) ChangeModel(model string, sink Sink) (Event, error) {
	if !s.busy.CompareAndSwap(false, true) {
		return Event{}, ErrBusy
	}
	defer s.busy.Store(false)
	ev := Event{V: SchemaVersion, Session: s.ID, Run: s.run.ID, Agent: s.Agent, Step: s.Steps, Kind: KindModelChanged, Time: time.Now(), Data: &ModelChanged{Model: model}}
	if err := emitOutside(ev, sink); err != nil {
		return Event{}, err
	}
	return ev, s.Apply(ev)
}

// emitOutside hands an event made outside a run to sink and flushes it.
func emitOutside(ev Event, sink Sink) error {
	if sink == nil {
		return nil
	}
	if err := sink.Emit(ev); err != nil {
		return err
	}
	if f, ok := sink.(Flusher); ok {
		return f.Flush()
	}
	return nil
}
