package engine

// Answers with a shape, and guardrails: a run may be told the JSON Schema
// its final answer must meet (an invalid answer goes back to the model with
// the reason, up to OutputRetries times, then the run ends with error), and
// an agent may have guardrails, checked on the task before the first
// decision (input) and on the final answer (output); one that fails stops
// the run with stop reason guardrail.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// StopGuardrail: a guardrail stopped the run (its name and reason are the
// run's error).
const StopGuardrail StopReason = "guardrail"

// KindAnswerRejected: the final answer did not meet the output schema; it
// goes back to the model with the reason.
const KindAnswerRejected Kind = "answer_rejected"

// AnswerRejected is the payload of answer_rejected.
type AnswerRejected struct {
	Reason  string `json:"reason"`
	Attempt int    `json:"attempt"`
	// Message is what the model is told (with the schema).
	Message string `json:"message"`
}

// Guardrail is a check of a run's task (input) or final answer (output). It
// fails when Pattern matches the text, when Check says so, or when Agent
// (one of the engine's agents, run on the text in a session of its own,
// journaled nowhere) answers other than "pass".
type Guardrail struct {
	Name    string
	Pattern *regexp.Regexp
	// Check, when set, judges the text: ok, and why not.
	Check func(text string) (ok bool, why string)
	Agent string
}

// Guardrails are an agent's checks.
type Guardrails struct {
	Input, Output []Guardrail
}

// GuardrailError is why a guardrail stopped a run.
type GuardrailError struct {
	Name, Reason string
	Output       bool // of the answer; else of the task
}

func (e *GuardrailError) Error() string {
	what := "input"
	if e.Output {
		what = "output"
	}
	return fmt.Sprintf("guardrail %s (%s) stopped the run: %s", e.Name, what, e.Reason)
}

// GuardrailOf reads a GuardrailError's text (a run_finished's error):
// the guardrail's name, and ok when the text is one.
func GuardrailOf(text string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(text, "guardrail ")
	if !ok {
		return "", false
	}
	name, rest, ok = strings.Cut(rest, " (")
	if !ok || (!strings.HasPrefix(rest, "input) stopped the run: ") && !strings.HasPrefix(rest, "output) stopped the run: ")) {
		return "", false
	}
	return name, true
}

// CheckOutputSchema says what is wrong with raw as an output schema (nil:
// nothing).
func CheckOutputSchema(raw json.RawMessage) error {
	_, err := compileOutput(raw)
	return err
}

// SchemaCheck is a guardrail's Check that the text is JSON meeting the
// schema raw.
func SchemaCheck(raw json.RawMessage) (func(string) (bool, string), error) {
	o, err := compileOutput(raw)
	if err != nil || o == nil {
		return nil, err
	}
	return func(text string) (bool, string) {
		if _, err := o.check(text); err != nil {
			return false, err.Error()
		}
		return true, ""
	}, nil
}

// outputSchema is a compiled JSON Schema of final answers.
type outputSchema struct {
	raw json.RawMessage
	sch *jsonschema.Schema
}

// compileOutput compiles raw; nil for none.
func compileOutput(raw json.RawMessage) (*outputSchema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("engine: output schema: %w", err)
	}
	c := NewSchemaCompiler()
	if err := c.AddResource("output:", doc); err != nil {
		return nil, fmt.Errorf("engine: output schema: %w", err)
	}
	sch, err := c.Compile("output:")
	if err != nil {
		return nil, fmt.Errorf("engine: output schema: %w", err)
	}
	return &outputSchema{raw: raw, sch: sch}, nil
}

// check says whether answer meets the schema, and returns it as compact
// JSON (a ```json fence around it is taken off).
func (o *outputSchema) check(answer string) (string, error) {
	text := strings.TrimSpace(answer)
	if rest, ok := strings.CutPrefix(text, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "```"))
	}
	var inst any
	if err := json.Unmarshal([]byte(text), &inst); err != nil {
		return "", fmt.Errorf("the answer is not JSON (%v): it begins %q", err, OneLine(text, 60))
	}
	if err := o.sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return "", errors.New("the answer does not match the schema: " + flattenValidation(ve))
		}
		return "", fmt.Errorf("the answer does not match the schema: %v", err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// rejectedMessage is what the model is told of an answer the schema
// rejected.
func rejectedMessage(reason string, schema json.RawMessage) string {
	return "Your answer was not accepted: " + reason + ". Answer again with only a JSON value that matches this JSON Schema:\n" + string(schema)
}

// accept judges a final answer: against the output schema (an invalid one
// goes back to the model, journaled as answer_rejected: stop is "" then),
// then the output guardrails. It returns the answer the run ends with
// (the schema's compact JSON), how the run stops, and why.
func (r *run) accept(ctx context.Context, text string) (string, StopReason, error) {
	if o := r.prof.output; o != nil {
		answer, err := o.check(text)
		if err != nil {
			if r.rejections >= r.e.cfg.OutputRetries {
				return "", StopError, fmt.Errorf("the answer did not match the output schema after %d tries: %v", r.rejections+1, err)
			}
			r.rejections++
			rej := &AnswerRejected{Reason: err.Error(), Attempt: r.rejections, Message: rejectedMessage(err.Error(), o.raw)}
			if err := r.emit(Observe, KindAnswerRejected, rej); err != nil {
				return "", StopError, err
			}
			return "", "", nil
		}
		text = answer
	}
	if err := r.checkGuardrails(ctx, r.prof.guard.Output, text, true); err != nil {
		return "", StopGuardrail, err
	}
	return text, StopAnswered, nil
}
