package console

// "!command" in the console: the person runs a shell command in the
// workspace as the session's own run_shell call (the approval it always
// has), and the command with its output joins the conversation, for the
// model to read in the next request (as Claude Code's bash mode and
// Codex's !). No model is asked: the run's decisions are the person's.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/agentty/agentty/engine"
)

// bangModel is the person at the model's place for one "!" run: its first
// decision calls run_shell with the command, its second says it was run.
// It costs nothing and calls nothing.
type bangModel struct{ command string }

func (m bangModel) Decide(_ context.Context, req *engine.Request) (engine.Decision, error) {
	none := engine.Usage{Estimated: true} // no tokens: nobody was asked
	if req.Turn == 0 {
		args, _ := json.Marshal(map[string]string{"command": m.command})
		return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "bang_1", Name: "run_shell", Args: args}}, Usage: none}, nil
	}
	// The output for the person to read, as a terminal shows it: its first
	// lines (the whole of it is the call's result, which the model reads).
	out := ""
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == engine.RoleTool {
		out = req.Messages[n-1].Content
	}
	lines := strings.SplitN(strings.TrimRight(out, "\n"), "\n", bangLines+1)
	if len(lines) > bangLines {
		lines[bangLines] = "… (ctrl+x shows the whole output)"
	}
	return engine.Decision{Text: "```console\n$ " + m.command + "\n" + engine.Clip(strings.Join(lines, "\n"), 4<<10) + "\n```", Usage: none}, nil
}

// bangLines is how many lines of a "!" command's output the chat shows.
const bangLines = 40

// Shell runs command as the person's "!" (see above); without
// --allow-shell it is refused, saying so.
func (b *backend) Shell(ctx context.Context, command string) <-chan engine.Event {
	refuse := func(err error) <-chan engine.Event {
		ch := make(chan engine.Event, 1)
		ch <- engine.Refusal(b.journal.ID, err)
		close(ch)
		return ch
	}
	if _, ok := b.con.Setup.Registry().Lookup("run_shell"); !ok {
		return refuse(errors.New("! runs a shell command only when the shell is allowed: start agentty with --allow-shell"))
	}
	ec := b.con.Setup.Engine.Config()
	// Its decisions count as the session's model's, at no tokens: the
	// status line and the cost stay the session's.
	ec.Model, ec.ModelName, ec.OutputSchema = bangModel{command}, cmp.Or(b.session.Model, b.model, b.con.Setup.ModelName), nil
	// The session's agent stays its agent, but nobody's model is asked
	// and no guardrail's judge runs: the person decides this run.
	ec.Agents = slices.Clone(ec.Agents)
	for i := range ec.Agents {
		a := &ec.Agents[i]
		a.Model, a.ModelName, a.OutputSchema, a.Guardrails = nil, "", nil, engine.Guardrails{}
	}
	e := engine.New(ec)
	if err := e.Err(); err != nil {
		return refuse(err)
	}
	b.session.UseSettings(b.settings())
	return e.Start(ctx, b.session, "!"+command, b.sink)
}
