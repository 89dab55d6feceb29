package openai_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/engine/openai"
)

// TestCompactionOnTheWire runs long turns through the real client against
// the in-process server until the engine compacts, and checks what was
// sent: the summary call (the summarising system prompt, the transcript as
// one user message, no tools, not the instructions) and the requests after
// it (the instructions in the system message, the summary as a user
// message after it, then only the kept messages).
func TestCompactionOnTheWire(t *testing.T) {
	f := enginetest.NewServerFunc(t, func(n int, req enginetest.Request) enginetest.Reply {
		msgs := req.Body["messages"].([]any)
		if strings.Contains(msgs[0].(map[string]any)["content"].(string), "You compact") {
			return enginetest.Reply{Body: enginetest.Answer("- the person asked about turns 1 and 2")}
		}
		return enginetest.Reply{Body: enginetest.Answer(strings.Repeat("words ", 80))}
	})
	e := engine.New(engine.Config{Model: newModel(f, nil), System: "be brief", Budget: 1400,
		Tools: enginetest.Registry(t, enginetest.EchoTool()),
		Retry: engine.Retry{Initial: time.Millisecond, Attempts: 2},
		Instructions: func() engine.Instructions {
			return engine.Instructions{Text: "Answer in English.", Sources: []string{"AGENTS.md"}}
		}})
	s := engine.NewSession("s")
	rec := &enginetest.Recorder{}
	for i := range 8 {
		if res := e.Run(context.Background(), s, fmt.Sprintf("turn %d: %s", i+1, strings.Repeat("detail ", 40)), rec); res.StopReason != engine.StopAnswered {
			t.Fatal(res)
		}
	}
	if len(rec.Of(engine.KindContextCompacted)) == 0 {
		t.Fatal("no compaction")
	}
	var sawSummaryCall, sawCompacted bool
	for _, r := range f.Requests() {
		msgs := r.Body["messages"].([]any)
		first := msgs[0].(map[string]any)["content"].(string)
		if strings.Contains(first, "You compact") {
			sawSummaryCall = true
			if len(msgs) != 2 || r.Body["tools"] != nil || strings.Contains(first, "Answer in English") {
				t.Errorf("summary call: %d messages, tools %v, system %q", len(msgs), r.Body["tools"], first)
			}
			if user := msgs[1].(map[string]any); user["role"] != "user" || !strings.Contains(user["content"].(string), "Person: turn 1:") {
				t.Errorf("summary call's transcript: %v", user)
			}
			continue
		}
		if !strings.Contains(first, "be brief"+openai.InstructionsHeading+"Answer in English.") {
			t.Errorf("system message without the instructions: %q", first)
		}
		if len(msgs) > 1 {
			if second := msgs[1].(map[string]any); strings.HasPrefix(fmt.Sprint(second["content"]), openai.SummaryHeading) {
				sawCompacted = true
				if second["role"] != "user" || second["content"] != openai.SummaryHeading+"- the person asked about turns 1 and 2" {
					t.Errorf("the summary message: %v", second["content"])
				}
				if third := msgs[2].(map[string]any); third["role"] != "user" || strings.Contains(third["content"].(string), "turn 1:") {
					t.Errorf("after the summary comes %v", third)
				}
			}
		}
	}
	if !sawSummaryCall || !sawCompacted {
		t.Errorf("summary call sent %v, a compacted request sent %v", sawSummaryCall, sawCompacted)
	}
}
