package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/tools"
)

// A run with the built-in offline model (no key, no server) and the
// built-in tools.
func ExampleEngine_Run() {
	reg, err := engine.NewRegistry(tools.Builtins()...)
	if err != nil {
		panic(err)
	}
	e := engine.New(engine.Config{Model: offline.Model{}, Tools: reg})
	s := engine.NewSession("example")
	res := e.Run(context.Background(), s, "what is 17*23?", nil)
	fmt.Println(res.StopReason, res.Answer)
	// Output: answered 17*23 = 391
}

// wordCount is a tool written in Go: its schema is what the model sees,
// its Func what a call runs.
var wordCount = engine.Tool{
	Name:        "word_count",
	Description: "Count the words of a text.",
	Schema:      json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	Func: func(_ context.Context, c *engine.Call) (string, error) {
		var args struct{ Text string }
		if err := c.Bind(&args); err != nil {
			return "", err
		}
		return fmt.Sprint(len(strings.Fields(args.Text))), nil
	},
}

// countingModel stands for a model: it calls word_count on the task,
// then answers with what the tool said. Any engine.Model will do: a
// client of an OpenAI-compatible server (engine/openai) is one.
type countingModel struct{}

func (countingModel) Decide(_ context.Context, req *engine.Request) (engine.Decision, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == engine.RoleTool { // the count, then any note the engine adds for the model
		return engine.Decision{Text: "That text has " + strings.Fields(last.Content)[0] + " words."}, nil
	}
	args, _ := json.Marshal(map[string]string{"text": last.Content})
	return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c1", Name: "word_count", Args: args}}}, nil
}

// A tool written in Go, given to the engine in a registry.
func Example_tool() {
	tools, err := engine.NewRegistry(wordCount)
	if err != nil {
		panic(err)
	}
	e := engine.New(engine.Config{Model: countingModel{}, Tools: tools})
	res := e.Run(context.Background(), engine.NewSession("example"), "the quick brown fox jumps", nil)
	fmt.Println(res.Answer)
	// Output: That text has 5 words.
}

// Every step of a run is an event, handed to the sink in order as it
// happens: a program watches a run (or journals it) through its sink.
func Example_events() {
	tools, _ := engine.NewRegistry(wordCount)
	e := engine.New(engine.Config{Model: countingModel{}, Tools: tools})
	sink := engine.SinkFunc(func(ev engine.Event) error {
		switch d := ev.Data.(type) {
		case *engine.ToolStarted:
			fmt.Printf("step %d: %s %s\n", ev.Step, d.Name, d.Args)
		case *engine.ToolFinished:
			fmt.Printf("step %d: %s → %s\n", ev.Step, d.Status, d.Result)
		case *engine.RunFinished:
			fmt.Printf("step %d: %s: %s\n", ev.Step, d.StopReason, d.Answer)
		}
		return nil
	})
	e.Run(context.Background(), engine.NewSession("example"), "one two three", sink)
	// Output:
	// step 1: word_count {"text":"one two three"}
	// step 1: ok → 3
	// step 2: answered: That text has 3 words.
}

// editingGate stops before every tool call and approves it with its
// arguments changed: a gate is where a person (or a program) steps,
// approves, edits or denies.
type editingGate struct{}

func (editingGate) Stop(p engine.Pending) bool { return p.At == engine.Act }

func (editingGate) Wait(_ context.Context, p engine.Pending) (engine.Verdict, error) {
	fmt.Printf("asked before %s %s\n", p.ToolCall.Name, p.ToolCall.Args)
	return engine.Verdict{Action: engine.Proceed, Args: json.RawMessage(`{"text":"just two"}`)}, nil
}

// A gate that approves a tool call with its arguments edited.
func Example_gate() {
	tools, _ := engine.NewRegistry(wordCount)
	e := engine.New(engine.Config{Model: countingModel{}, Tools: tools, Gate: editingGate{}})
	res := e.Run(context.Background(), engine.NewSession("example"), "one two three four", nil)
	fmt.Println(res.Answer)
	// Output:
	// asked before word_count {"text":"one two three four"}
	// That text has 2 words.
}
