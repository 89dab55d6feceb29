package engine

import (
	"fmt"
	"slices"
	"sync/atomic"
)

// Fact is one entry of memory: a key, its value and the step that wrote it.
type Fact struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Step  int    `json:"step"`
}

// Session is the conversation that runs belong to: its history, memory, step
// count and token usage persist across runs. A Session's state changes only
// through Apply, so replaying a journal of its events rebuilds it exactly.
//
// A Session is used by one run at a time; Engine.Run refuses a second
// concurrent run on the same Session. Read its fields only while no run is
// going on, or from the run's own events.
type Session struct {
	ID      string
	History []Message
	// Steps is the number of the last step started in this session; step
	// numbers are unique within a session.
	Steps int
	// Runs counts the runs started.
	Runs  int
	Usage Usage

	memory []Fact // replaced, never modified in place: a Request may hold it
	// tokens[i] is the estimated token count of History[:i].
	tokens []int
	// pending collects the results of the current step's tool calls until
	// all of them are in, so that history keeps call order.
	pending     []Message
	pendingLeft int
	// run is the state of the last run; Open reports whether it finished.
	run  RunState
	busy atomic.Bool
}

// RunState describes the last run of a session, as far as its events tell.
type RunState struct {
	ID       string
	Task     string
	Turn     int // decisions made
	Finished bool
	Stop     StopReason
	// Unfinished lists tool calls of the last decision that started but
	// have no result: they were interrupted.
	Unfinished []ToolCall
	// Waiting lists tool calls of the last decision that have no result.
	Waiting []ToolCall
}

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

// Interrupted reports whether the last run stopped without a run_finished
// event (the process died), so that it can be continued.
func (s *Session) Interrupted() bool { return s.run.ID != "" && !s.run.Finished }

// tokensOf returns the estimated tokens of History[i:j].
func (s *Session) tokensOf(i, j int) int { return s.tokens[j] - s.tokens[i] }

func (s *Session) appendHistory(m Message) {
	if len(s.tokens) == 0 {
		s.tokens = []int{0}
	}
	s.History = append(s.History, m)
	s.tokens = append(s.tokens, s.tokens[len(s.tokens)-1]+EstimateMessage(m))
}

// Apply changes the session as the event says. The engine applies each event
// as it emits it; replaying a journal applies the same events to a fresh
// Session. Events of other sessions and of unknown kinds are ignored.
func (s *Session) Apply(ev Event) error {
	switch d := ev.Data.(type) {
	case *RunStarted:
		s.flushPending()
		s.Runs++
		s.run = RunState{ID: ev.Run, Task: d.Task}
		s.appendHistory(Message{Role: RoleUser, Content: d.Task})
	case *StepStarted:
		if ev.Step > s.Steps {
			s.Steps = ev.Step
		}
		s.run.Turn = d.Turn
	case *DecisionData:
		s.run.Turn++
		s.run.Unfinished, s.run.Waiting = nil, nil
		m := Message{Role: RoleAssistant, Content: d.Text, ToolCalls: d.ToolCalls}
		s.appendHistory(m)
		if len(d.ToolCalls) > 0 {
			s.pending = make([]Message, len(d.ToolCalls))
			s.pendingLeft = len(d.ToolCalls)
			s.run.Waiting = slices.Clone(d.ToolCalls)
		}
	case *ToolStarted:
		s.run.Unfinished = append(s.run.Unfinished, ToolCall{ID: d.ID, Name: d.Name, Args: d.Args})
	case *ToolFinished:
		if d.Index < 0 || d.Index >= len(s.pending) || s.pending[d.Index].Role != "" {
			return fmt.Errorf("engine: tool_finished for call %d (%s) that is not pending", d.Index, d.ID)
		}
		s.pending[d.Index] = Message{Role: RoleTool, Content: d.Result, ToolCallID: d.ID, Name: d.Name}
		s.pendingLeft--
		s.run.Unfinished = slices.DeleteFunc(s.run.Unfinished, func(c ToolCall) bool { return c.ID == d.ID })
		s.run.Waiting = slices.DeleteFunc(s.run.Waiting, func(c ToolCall) bool { return c.ID == d.ID })
		if s.pendingLeft == 0 {
			s.flushPending()
		}
	case *MemoryChanged:
		s.applyMemory(d, ev.Step)
	case *UsageData:
		s.Usage.PromptTokens += d.PromptTokens
		s.Usage.CompletionTokens += d.CompletionTokens
	case *StepFinished:
		s.flushPending()
	case *RunFinished:
		s.flushPending()
		s.run.Finished = true
		s.run.Stop = d.StopReason
	}
	return nil
}

// InterruptedResult is the tool result recorded for a call whose run ended
// (a crash, a kill) before it finished, when the session moves on without
// continuing that run.
const InterruptedResult = "error: this tool call was interrupted and has no result"

// flushPending appends the tool results of the step in call order. A call
// with no result (an interrupted step that a new run moves past) gets
// InterruptedResult, so that every tool call keeps its answer.
func (s *Session) flushPending() {
	if s.pending == nil {
		return
	}
	calls := s.History[len(s.History)-1].ToolCalls
	for i, m := range s.pending {
		if m.Role == "" {
			m = Message{Role: RoleTool, Content: InterruptedResult, ToolCallID: calls[i].ID, Name: calls[i].Name}
		}
		s.appendHistory(m)
	}
	s.pending, s.pendingLeft = nil, 0
	s.run.Unfinished, s.run.Waiting = nil, nil
}

func (s *Session) applyMemory(d *MemoryChanged, step int) {
	i := slices.IndexFunc(s.memory, func(f Fact) bool { return f.Key == d.Key })
	switch d.Op {
	case MemorySet:
		m := slices.Clone(s.memory)
		if i >= 0 {
			m[i] = Fact{Key: d.Key, Value: d.Value, Step: step}
		} else {
			m = append(m, Fact{Key: d.Key, Value: d.Value, Step: step})
		}
		s.memory = m
	case MemoryDelete:
		if i >= 0 {
			s.memory = slices.Delete(slices.Clone(s.memory), i, i+1)
		}
	}
}
