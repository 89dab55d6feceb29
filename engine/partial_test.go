package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// An answer the person cancels while it streams is kept: in run_finished,
// in the result, and in the session's history marked cut off, so the next
// request shows the model what it had said. A retried attempt's text is not.
func TestCancelMidAnswerKeepsThePartialAnswer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tries := 0
	model := enginetest.ModelFunc(func(ctx context.Context, req *engine.Request) (engine.Decision, error) {
		tries++
		if tries == 1 {
			req.Delta("dropped by the retry", false)
			return engine.Decision{}, &engine.Error{Retryable: true, Err: errString("503")}
		}
		req.Delta("thinking…", true)
		req.Delta("Once upon ", false)
		req.Delta("a time", false)
		cancel()
		<-ctx.Done()
		return engine.Decision{}, ctx.Err()
	})
	e := engine.New(engine.Config{Model: model, Retry: fastRetry})
	s := engine.NewSession("s")
	rec := &enginetest.Recorder{}
	res := e.Run(ctx, s, "tell me a story", rec)
	if res.StopReason != engine.StopCancelled || res.Partial != "Once upon a time" {
		t.Fatalf("result %s, partial %q; want cancelled with the streamed text", res.StopReason, res.Partial)
	}
	ends := rec.Of(engine.KindRunFinished)
	fin, _ := ends[len(ends)-1].Data.(*engine.RunFinished)
	if fin == nil || fin.Partial != "Once upon a time" {
		t.Fatalf("run_finished = %+v", fin)
	}
	last := s.History[len(s.History)-1]
	if last.Role != engine.RoleAssistant || last.Content != "Once upon a time"+engine.CutOffNote {
		t.Errorf("history ends with %+v", last)
	}
	// Replay through JSON rebuilds the same history.
	replayed := engine.NewSession("s")
	for _, ev := range rec.Events() {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		back, err := engine.DecodeEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		replayed.Apply(back)
	}
	if len(replayed.History) != len(s.History) || !strings.HasSuffix(replayed.History[len(replayed.History)-1].Content, engine.CutOffNote) {
		t.Errorf("replayed history %+v\nwant %+v", replayed.History, s.History)
	}
	// Cancelled after a decision with tool calls: nothing partial.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	block := engine.Tool{Name: "block", Func: func(ctx context.Context, _ *engine.Call) (string, error) {
		cancel2()
		<-ctx.Done()
		return "", ctx.Err()
	}}
	model2 := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		req.Delta("let me check", false)
		return engine.Decision{Text: "let me check", ToolCalls: []engine.ToolCall{{ID: "1", Name: "block"}}}, nil
	})
	res = engine.New(engine.Config{Model: model2, Tools: enginetest.Registry(t, block)}).Run(ctx2, engine.NewSession("s2"), "go", nil)
	if res.StopReason != engine.StopCancelled || res.Partial != "" {
		t.Errorf("cancelled in act: %s, partial %q; want no partial", res.StopReason, res.Partial)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
