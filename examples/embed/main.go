// Command embed runs agentty's engine from a Go program: the built-in
// offline model (no key, no server), the built-in tools and one written
// here in Go, every event printed as it happens, and the session journaled
// to a folder it can be resumed from (agentty sessions ls --all lists it
// when the folder is agentty's). Run it with: go run ./examples/embed
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/tools"
)

// shout is a tool written in Go.
var shout = engine.Tool{
	Name:        "shout",
	Description: "Say a text in capitals.",
	Schema:      json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	Func: func(_ context.Context, c *engine.Call) (string, error) {
		var args struct{ Text string }
		if err := c.Bind(&args); err != nil {
			return "", err
		}
		return strings.ToUpper(args.Text), nil
	},
}

func main() {
	dir, err := os.MkdirTemp("", "agentty-embed")
	if err == nil {
		err = run(os.Stdout, dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

// run runs three tasks in one session journaled in dir, saying what
// happens on out.
func run(out io.Writer, dir string) error {
	reg, err := engine.NewRegistry(append(tools.Builtins(), shout)...)
	if err != nil {
		return err
	}
	// Any engine.Model: openai.New(openai.Config{BaseURL: "http://localhost:11434/v1",
	// Model: "qwen2.5-coder:7b"}) talks to an OpenAI-compatible server.
	e := engine.New(engine.Config{Model: offline.Model{}, ModelName: offline.Name, Tools: reg, MaxSteps: 8})
	store, err := sessions.Open(dir)
	if err != nil {
		return err
	}
	journal, err := store.Create()
	if err != nil {
		return err
	}
	defer journal.Close()
	print := engine.SinkFunc(func(ev engine.Event) error {
		switch d := ev.Data.(type) {
		case *engine.ToolStarted:
			fmt.Fprintf(out, "  step %d: %s %s\n", ev.Step, d.Name, d.Args)
		case *engine.ToolFinished:
			fmt.Fprintf(out, "  step %d: %s → %s\n", ev.Step, d.Status, d.Result)
		}
		return nil
	})
	s := engine.NewSession(journal.ID)
	for _, task := range []string{"what is 17*23?", "remember that the release is on Friday", "when is the release?"} {
		fmt.Fprintln(out, "> "+task)
		res := e.Run(context.Background(), s, task, engine.Sinks{journal, print})
		if res.Err != nil {
			return res.Err
		}
		fmt.Fprintln(out, res.Answer)
	}
	fmt.Fprintf(out, "journaled as session %s in %s\n", journal.ID, dir)
	return nil
}
