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

// A server that keeps the connection busy with keep-alive comments or
// empty deltas, and no part of an answer, stalls like one that sends
// nothing: the attempt ends at the stall timeout and is retried, and
// the next good reply is taken.
func TestKeepAlivesDoNotDefeatTheStallTimeout(t *testing.T) {
	for name, filler := range map[string]string{
		"comments":     ": keep-alive\n\n",
		"empty deltas": "data: " + `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":null}]}` + "\n\n",
		"role only":    "data: " + `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n",
		"usage again":  "data: " + `{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}` + "\n\n",
		"finish again": "data: " + enginetest.FinishChunk("stop") + "\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			// 200 fillers 50 ms apart: ten seconds of keep-alives, then
			// an answer the stall timeout should never let arrive.
			slow := enginetest.Reply{Body: strings.Repeat(filler, 200) + enginetest.Answer("too late"), Gap: 50 * time.Millisecond}
			f := enginetest.NewServer(t, slow, enginetest.Reply{Body: enginetest.Answer("fine")})
			m := newModel(f, func(c *openai.Config) { c.StallTimeout = 500 * time.Millisecond })
			res, rec, _ := runEngine(t, m, "go")
			if res.StopReason != engine.StopAnswered || res.Answer != "fine" {
				t.Fatalf("result %+v", res)
			}
			retries := rec.Of(engine.KindRetry)
			if len(retries) != 1 || !strings.Contains(retries[0].Data.(*engine.RetryScheduled).Cause, "sent nothing for 500ms") {
				t.Fatalf("retries %+v, want one for the stall", retries)
			}
		})
	}
}

// Slow but steady text keeps the stream alive: each part restarts the
// stall timer.
func TestSteadyTextIsNotAStall(t *testing.T) {
	var pieces []string
	for range 12 {
		pieces = append(pieces, "word ")
	}
	f := enginetest.NewServer(t, enginetest.Reply{Body: enginetest.Answer(pieces...), Gap: 100 * time.Millisecond})
	m := newModel(f, func(c *openai.Config) { c.StallTimeout = 700 * time.Millisecond })
	res, rec, _ := runEngine(t, m, "go")
	if res.StopReason != engine.StopAnswered || len(rec.Of(engine.KindRetry)) != 0 {
		t.Fatalf("result %+v, retries %d", res, len(rec.Of(engine.KindRetry)))
	}
}

// An answer past the cap ends the decision with an error that says so,
// not retried, and nothing past the cap is kept: in many chunks, in one
// line that never ends, and in a reply that is not a stream.
func TestAnswerCap(t *testing.T) {
	big := strings.Repeat("x", 1000)
	var chunks []string
	for range 100 {
		chunks = append(chunks, enginetest.TextChunk(big))
	}
	args := `{"text":"` + strings.Repeat("y", 200<<10) + `"}`
	for name, reply := range map[string]enginetest.Reply{
		"text in chunks":  {Body: enginetest.SSE(append(chunks, enginetest.FinishChunk("stop"))...)},
		"tool arguments":  {Body: enginetest.ToolCallStream("c1", "echo", args, 4)},
		"a line unended":  {Body: "data: " + strings.Repeat("z", 300<<10)},
		"one JSON answer": {Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("w", 300<<10) + `"},"finish_reason":"stop"}]}`},
	} {
		t.Run(name, func(t *testing.T) {
			f := enginetest.NewServer(t, reply, enginetest.Reply{Body: enginetest.Answer("fine")})
			m := newModel(f, func(c *openai.Config) { c.MaxAnswerBytes = 64 << 10 })
			res, rec, s := runEngine(t, m, "go")
			if res.StopReason != engine.StopError || res.Err == nil || !strings.Contains(res.Err.Error(), "passed the cap of 65536 bytes") {
				t.Fatalf("result %+v", res)
			}
			if n := len(f.Requests()); n != 1 {
				t.Errorf("%d requests: an answer past the cap was retried", n)
			}
			var streamed int
			for _, ev := range rec.Of(engine.KindTextDelta) {
				streamed += len(ev.Data.(*engine.TextDelta).Text)
			}
			if streamed > 64<<10 {
				t.Errorf("%d bytes streamed past the cap", streamed)
			}
			// The next good request still works.
			if res := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t)}).Run(context.Background(), s, "again", nil); res.Answer != "fine" {
				t.Errorf("the next request: %+v", res)
			}
		})
	}
}

// A server's absurd token counts are not added up (the session's count
// would wrap below zero and a token budget never stop the run): the
// call's tokens are estimated, with a notice that says why.
func TestAbsurdTokenCounts(t *testing.T) {
	for name, usage := range map[string]string{
		"max int64": `{"prompt_tokens":9223372036854775807,"completion_tokens":5}`,
		"1e30":      `{"prompt_tokens":1e30,"completion_tokens":5}`,
		"negative":  `{"prompt_tokens":10,"completion_tokens":-7}`,
	} {
		t.Run(name, func(t *testing.T) {
			body := enginetest.SSE(enginetest.TextChunk("four"), enginetest.FinishChunk("stop"), `{"id":"c","object":"chat.completion.chunk","choices":[],"usage":`+usage+`}`)
			f := enginetest.NewServer(t, enginetest.Reply{Body: body}, enginetest.Reply{Body: body})
			res, rec, s := runEngine(t, newModel(f, nil), "what is 2+2")
			if res.StopReason != engine.StopAnswered || res.Answer != "four" {
				t.Fatalf("result %+v", res)
			}
			e := engine.New(engine.Config{Model: newModel(f, nil), Tools: enginetest.Registry(t)})
			e.Run(context.Background(), s, "again", rec)
			if s.Usage.PromptTokens <= 0 || s.Usage.PromptTokens > 1e6 || s.Usage.CompletionTokens < 0 {
				t.Errorf("session usage %+v", s.Usage)
			}
			var noted bool
			for _, ev := range rec.Of(engine.KindNotice) {
				noted = noted || strings.Contains(ev.Data.(*engine.Notice).Message, "which cannot be: this call's tokens are estimated")
			}
			if !noted {
				t.Error("no notice of the implausible count")
			}
		})
	}
}

// A token budget still stops a run whose server reports absurd counts.
func TestTokenBudgetWithAbsurdCounts(t *testing.T) {
	call := enginetest.SSE(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"echo","arguments":"{\"text\":\"hi\"}"}}]},"finish_reason":null}]}`,
		enginetest.FinishChunk("tool_calls"), `{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":9223372036854775807,"completion_tokens":9223372036854775807}}`)
	f := enginetest.NewServerFunc(t, func(int, enginetest.Request) enginetest.Reply { return enginetest.Reply{Body: call} })
	e := engine.New(engine.Config{Model: newModel(f, nil), Tools: enginetest.Registry(t, enginetest.EchoTool()), MaxTokens: 5000, MaxSteps: 50})
	res := e.Run(context.Background(), engine.NewSession("s"), "loop", nil)
	if res.StopReason != engine.StopBudget {
		t.Fatalf("result %+v, want a budget stop", res)
	}
	if n := len(f.Requests()); n > 40 {
		t.Errorf("%d requests before the budget stopped the run", n)
	}
}

// Comment lines are kept by the stream reader (go-openai gathers lines
// that are not data for its errors): past the cap of a line, their sum
// ends the decision as an answer past the cap does, so a server that
// mixes them with a trickle of text cannot fill the memory.
func TestCommentFloodIsBounded(t *testing.T) {
	comment := ": " + strings.Repeat("c", 8<<10) + "\n\n"
	var body strings.Builder
	for i := range 40 {
		body.WriteString(comment)
		body.WriteString("data: " + enginetest.TextChunk(fmt.Sprint(i)) + "\n\n")
	}
	f := enginetest.NewServer(t, enginetest.Reply{Body: body.String() + enginetest.Answer("end")}, enginetest.Reply{Body: enginetest.Answer("fine")})
	m := newModel(f, func(c *openai.Config) { c.MaxAnswerBytes = 64 << 10 })
	res, _, _ := runEngine(t, m, "go")
	if res.StopReason != engine.StopError || res.Err == nil || !strings.Contains(res.Err.Error(), "passed the cap") {
		t.Fatalf("result %+v", res)
	}
}
