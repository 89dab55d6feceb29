package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// UnmarshalJSON decodes an event and its payload into the payload type of its
// kind (always a pointer, as *RunStarted). The payload of an unknown kind is
// kept as json.RawMessage.
func (e *Event) UnmarshalJSON(b []byte) error {
	ev, err := DecodeEvent(b)
	if err != nil {
		return err
	}
	*e = ev
	return nil
}

// DecodeEvent decodes one JSON-encoded event, as UnmarshalJSON does, in one
// pass when it can: the kind is read first, so that the payload is decoded
// straight into its type.
func DecodeEvent(b []byte) (Event, error) {
	type plain Event // no UnmarshalJSON method
	if k, ok := peekKind(b); ok {
		if p := newPayload(k); p != nil {
			ev := plain{Data: p}
			if err := json.Unmarshal(b, &ev); err == nil && ev.Kind == k {
				if ev.Data != p || !bytes.Contains(b, []byte(`"data":`)) { // "data": null, or no data
					ev.Data = nil
				}
				return Event(ev), nil
			}
		}
	}
	// The general way: the envelope, then the payload.
	var raw struct {
		plain
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Event{}, err
	}
	ev := Event(raw.plain)
	ev.Data = nil
	if len(raw.Data) == 0 || string(raw.Data) == "null" {
		return ev, nil
	}
	p := newPayload(ev.Kind)
	if p == nil {
		ev.Data = raw.Data
		return ev, nil
	}
	if err := json.Unmarshal(raw.Data, p); err != nil {
		return Event{}, fmt.Errorf("%s payload: %w", ev.Kind, err)
	}
	ev.Data = p
	return ev, nil
}

var kindKey = []byte(`"kind":"`)

// peekKind finds the value of the first "kind" key, which agentty writes
// before "data". A wrong guess is caught by DecodeEvent.
func peekKind(b []byte) (Kind, bool) {
	i := bytes.Index(b, kindKey)
	if i < 0 {
		return "", false
	}
	rest := b[i+len(kindKey):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return "", false
	}
	return Kind(rest[:j]), true
}

// Known reports whether this version of agentty knows the event's kind.
func (e *Event) Known() bool { return newPayload(e.Kind) != nil }

// newPayload returns a new, empty payload of kind k's type, or nil for a
// kind this version does not know.
func newPayload(k Kind) any {
	switch k {
	case KindRunStarted:
		return &RunStarted{}
	case KindAnswerRejected:
		return &AnswerRejected{}
	case KindPrompt:
		return &Prompt{}
	case KindQuestionAsked:
		return &QuestionAsked{}
	case KindRequestEdited:
		return &RequestEdited{}
	case KindQuestionAnswered:
		return &QuestionAnswered{}
	case KindStepStarted:
		return &StepStarted{}
	case KindModelRequest:
		return &ModelRequest{}
	case KindTextDelta:
		return &TextDelta{}
	case KindDecision:
		return &Decided{}
	case KindToolStarted:
		return &ToolStarted{}
	case KindToolFinished:
		return &ToolFinished{}
	case KindRetry:
		return &RetryScheduled{}
	case KindMemoryChanged:
		return &MemoryChanged{}
	case KindContextTrimmed:
		return &ContextTrimmed{}
	case KindGatePaused:
		return &GatePaused{}
	case KindGateResumed:
		return &GateResumed{}
	case KindUsage:
		return &UsageRecorded{}
	case KindStepFinished:
		return &StepFinished{}
	case KindRunFinished:
		return &RunFinished{}
	case KindNotice:
		return &Notice{}
	case KindHook:
		return &HookRun{}
	case KindHandoff:
		return &Handoff{}
	case KindContextCompacted:
		return &ContextCompacted{}
	case KindModelChanged:
		return &ModelChanged{}
	case KindSettingsChanged:
		return &Settings{}
	case KindCheckpoint:
		return &Checkpointed{}
	case KindWorkflowStarted:
		return &WorkflowStarted{}
	case KindWorkflowStepFinished:
		return &WorkflowStepFinished{}
	case KindWorkflowFinished:
		return &WorkflowFinished{}
	}
	return nil
}
