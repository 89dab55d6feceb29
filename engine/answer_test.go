package engine_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

const prioritySchema = `{"type":"object","properties":{"priority":{"enum":["low","high"]}},"required":["priority"],"additionalProperties":false}`

// answers is a model that answers each of texts in turn, and records
// whether its requests carried the output schema.
func answers(texts ...string) (engine.Model, *[]bool) {
	var schemaSent []bool
	n := 0
	return enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		schemaSent = append(schemaSent, req.OutputSchema != nil)
		t := texts[min(n, len(texts)-1)]
		n++
		return engine.Decision{Text: t}, nil
	}), &schemaSent
}

// An answer that does not meet the output schema goes back to the model
// with the reason; a valid one ends the run as compact JSON. Past the
// retries, the run ends with error saying why.
func TestOutputSchema(t *testing.T) {
	m, sent := answers("I think it is high.", "```json\n{ \"priority\": \"urgent\" }\n```", "{\n  \"priority\": \"high\"\n}")
	e := engine.New(engine.Config{Model: m, OutputSchema: json.RawMessage(prioritySchema), Tools: enginetest.Registry(t)})
	rec := &enginetest.Recorder{}
	s := engine.NewSession("s")
	res := e.Run(context.Background(), s, "triage this", rec)
	if res.StopReason != engine.StopAnswered || res.Answer != `{"priority":"high"}` {
		t.Fatalf("result %+v", res)
	}
	rej := rec.Of(engine.KindAnswerRejected)
	if len(rej) != 2 || !strings.Contains(rej[0].Data.(*engine.AnswerRejected).Reason, "not JSON") ||
		!strings.Contains(rej[1].Data.(*engine.AnswerRejected).Reason, "does not match the schema") {
		t.Errorf("rejections %+v", rej)
	}
	if len(*sent) != 3 || !(*sent)[0] {
		t.Errorf("the schema was sent with the requests: %v", *sent)
	}
	// The model read why: the history holds the rejection.
	if h := s.History; !strings.Contains(h[len(h)-2].Content, "Your answer was not accepted") {
		t.Errorf("history %+v", h)
	}

	m, _ = answers("nope")
	e = engine.New(engine.Config{Model: m, OutputSchema: json.RawMessage(prioritySchema), Tools: enginetest.Registry(t)})
	res = e.Run(context.Background(), engine.NewSession("s2"), "triage", nil)
	if res.StopReason != engine.StopError || !strings.Contains(res.Err.Error(), "did not match the output schema after 3 tries") {
		t.Errorf("past the retries: %+v", res)
	}
	if e := engine.New(engine.Config{Model: m, OutputSchema: json.RawMessage(`{"type": 7}`)}); e.Err() == nil {
		t.Error("a bad schema was taken")
	}
}

// An agent's guardrails: an input one stops the run before it decides, an
// output one when the answer matches; both with stop reason guardrail.
func TestGuardrails(t *testing.T) {
	g := engine.Guardrails{
		Input:  []engine.Guardrail{{Name: "no-secrets-asked", Pattern: regexp.MustCompile(`(?i)password`)}},
		Output: []engine.Guardrail{{Name: "no-launch-code", Pattern: regexp.MustCompile(`LAUNCH-[0-9]+`)}},
	}
	decided := 0
	m := enginetest.ModelFunc(func(context.Context, *engine.Request) (engine.Decision, error) {
		decided++
		return engine.Decision{Text: "the code is LAUNCH-42"}, nil
	})
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t), Agent: "ops",
		Agents: []engine.Agent{{Name: "ops", Description: "ops", Guardrails: g}}})
	res := e.Run(context.Background(), engine.NewSession("s"), "what is the admin Password?", nil)
	if res.StopReason != engine.StopGuardrail || decided != 0 || !strings.Contains(res.Err.Error(), "guardrail no-secrets-asked (input)") {
		t.Errorf("input: %+v, %d decisions", res, decided)
	}
	rec := &enginetest.Recorder{}
	res = e.Run(context.Background(), engine.NewSession("s2"), "give me the code", rec)
	if res.StopReason != engine.StopGuardrail || res.Answer != "" || !strings.Contains(res.Err.Error(), `guardrail no-launch-code (output) stopped the run: the text matches /LAUNCH-[0-9]+/ ("LAUNCH-42")`) {
		t.Errorf("output: %+v", res)
	}
	fin := rec.Of(engine.KindRunFinished)
	if len(fin) != 1 || fin[0].Data.(*engine.RunFinished).StopReason != engine.StopGuardrail {
		t.Errorf("run_finished %+v", fin)
	}
}

// askGate answers questions as a person would, or never.
type askGate struct {
	answer string
	never  bool
}

func (askGate) Stop(engine.Pending) bool { return false }
func (g askGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	if p.Question == nil {
		return engine.Verdict{Action: engine.Proceed}, nil
	}
	if g.never {
		<-ctx.Done()
		return engine.Verdict{}, ctx.Err()
	}
	return engine.Verdict{Action: engine.Proceed, Answer: g.answer, By: "test"}, nil
}

// ask_user pauses the run on the gate until the person answers; the
// question and the answer are journaled, the answer is the call's result.
// With no answer in AskTimeout, or no gate, the model is told so.
func TestAskUser(t *testing.T) {
	model := func() engine.Model {
		n := 0
		return enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
			n++
			if n == 1 {
				return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "q1", Name: engine.AskUserTool, Args: json.RawMessage(`{"question":"Your name?","choices":["Ada","Bob"]}`)}}}, nil
			}
			return engine.Decision{Text: "ok: " + req.Messages[len(req.Messages)-1].Content}, nil
		})
	}
	reg := enginetest.Registry(t, engine.AskUser())
	rec := &enginetest.Recorder{}
	res := engine.New(engine.Config{Model: model(), Tools: reg, Gate: askGate{answer: "Ada"}}).Run(context.Background(), engine.NewSession("s"), "ask me", rec)
	if res.Answer != "ok: Ada" {
		t.Errorf("answered: %+v", res)
	}
	asked, answered := rec.Of(engine.KindQuestionAsked), rec.Of(engine.KindQuestionAnswered)
	if len(asked) != 1 || asked[0].Data.(*engine.QuestionAsked).Question.Question != "Your name?" || len(answered) != 1 || answered[0].Data.(*engine.QuestionAnswered).By != "test" {
		t.Errorf("events: %+v %+v", asked, answered)
	}
	res = engine.New(engine.Config{Model: model(), Tools: reg, Gate: askGate{never: true}, AskTimeout: 50 * time.Millisecond}).Run(context.Background(), engine.NewSession("s2"), "ask me", nil)
	if !strings.Contains(res.Answer, "error: no answer within") {
		t.Errorf("timed out: %+v", res)
	}
	res = engine.New(engine.Config{Model: model(), Tools: reg}).Run(context.Background(), engine.NewSession("s3"), "ask me", nil)
	if !strings.Contains(res.Answer, "there is no one to ask here") {
		t.Errorf("no gate: %+v", res)
	}
}

// A guardrail that asks an agent: the agent's "pass" lets the answer
// through; "fail: …" stops the run with its reason.
func TestAgentGuardrail(t *testing.T) {
	var judged []string
	m := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		task := req.Messages[0].Content
		if strings.Contains(req.System, "You judge tone.") {
			judged = append(judged, task)
			if strings.Contains(task, "idiot") {
				return engine.Decision{Text: "fail: it is rude"}, nil
			}
			return engine.Decision{Text: "pass"}, nil
		}
		return engine.Decision{Text: "you " + task}, nil
	})
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t), Agent: "support", Agents: []engine.Agent{
		{Name: "support", Description: "support", Guardrails: engine.Guardrails{Output: []engine.Guardrail{{Name: "polite", Agent: "tone"}}}},
		{Name: "tone", Description: "tone", System: "You judge tone."},
	}})
	if res := e.Run(context.Background(), engine.NewSession("s"), "are kind", nil); res.StopReason != engine.StopAnswered || res.Answer != "you are kind" {
		t.Errorf("a polite answer: %+v", res)
	}
	res := e.Run(context.Background(), engine.NewSession("s2"), "idiot", nil)
	if res.StopReason != engine.StopGuardrail || !strings.Contains(res.Err.Error(), "its agent tone says: fail: it is rude") {
		t.Errorf("a rude answer: %+v", res)
	}
	if len(judged) != 2 {
		t.Errorf("judged %v", judged)
	}
	bad := engine.New(engine.Config{Model: m, Agents: []engine.Agent{{Name: "a", Description: "a", Guardrails: engine.Guardrails{Input: []engine.Guardrail{{Name: "g", Agent: "nobody"}}}}}})
	if bad.Err() == nil {
		t.Error("a guardrail asking no agent was taken")
	}
}
