// Package importer makes agentty sessions of other agents' transcripts:
// Claude Code's (~/.claude/projects/PROJECT/SESSION.jsonl) and Codex's
// rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl). A transcript is
// read a line at a time (never whole) into runs of decisions and tool
// results, and replayed through agentty's own engine with the decisions as
// its model and the results as its tools: nothing is run again, the
// results stay observations, and the journal is agentty's own, so every
// tool (the console, show, export, trace, search, fork) works on it.
package importer

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// Transcript is what a transcript said, in agentty's terms.
type Transcript struct {
	Source string // "claude" or "codex"
	ID     string // the other agent's session id
	Cwd    string // the folder it was worked on in
	Model  string
	Runs   []Run
	// Results are the tool calls' results, by call id.
	Results map[string]Result
	// Notes say what was left out: lines that could not be read (with
	// their line), branches not on the live chain, sub-agents' messages.
	Notes []string
}

// Run is a person's message and the decisions that answered it.
type Run struct {
	Task  string
	At    time.Time
	Turns []Turn
}

// Turn is one decision: text, reasoning and tool calls, and its usage.
type Turn struct {
	Text, Reasoning string
	Calls           []engine.ToolCall
	Usage           engine.Usage
	At              time.Time
	id              string // the other agent's message id (Claude Code writes a message's blocks a line each)
}

// Result is a tool call's recorded result.
type Result struct {
	Text    string
	IsError bool
	At      time.Time
}

// Import journals t as a new session of store and returns its id. Each
// run is replayed through the engine: its decisions are the model's, the
// recorded results its tools' answers, at the transcript's times.
func Import(ctx context.Context, store *sessions.Store, t *Transcript) (string, error) {
	if len(t.Runs) == 0 {
		return "", fmt.Errorf("the transcript has no message of a person to import")
	}
	j, err := store.Create()
	if err != nil {
		return "", err
	}
	err = replay(ctx, j, t)
	if cerr := j.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		store.Remove(j.ID) // no half-made session: a retry starts clean
		return "", err
	}
	title := engine.OneLine(t.Runs[0].Task, 50) + " [" + t.Source + " " + shortID(t.ID) + "]"
	return j.ID, store.Rename(j.ID, title)
}

// replay runs t's runs through the engine into the journal j.
func replay(ctx context.Context, j *sessions.Journal, t *Transcript) error {
	s := engine.NewSession(j.ID)
	origin := "import:" + t.Source
	sink := &timedSink{next: j}
	for i, run := range t.Runs {
		r := &replayer{t: t, turns: run.Turns, sink: sink}
		reg, err := engine.NewRegistry(r.tools()...)
		if err != nil {
			return err
		}
		e := engine.New(engine.Config{Model: r, ModelName: t.Source + ":" + cmpOr(t.Model, "unknown"), Tools: reg, MaxSteps: max(len(run.Turns)+1, 1),
			Compact: engine.Compaction{Off: true}, Budget: 1 << 30, MaxCalls: 1 << 12, Prices: importedPrice})
		if err := e.Err(); err != nil {
			return err
		}
		if i == 0 {
			s.UseSettings(engine.Settings{Workspace: t.Cwd, Origin: origin})
		}
		sink.at = run.At
		res := e.Run(ctx, s, run.Task, sink)
		if res.Err != nil {
			return fmt.Errorf("run %d of the transcript: %w", i+1, res.Err)
		}
		if left := len(run.Turns) - r.next; left > 0 { // the run ended on a decision with no call before its last
			t.Notes = append(t.Notes, fmt.Sprintf("run %d: %d decisions after its answer were not imported", i+1, left))
		}
	}
	return j.Flush()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func shortID(id string) string { return id[:min(len(id), 8)] }

// timedSink gives each event the transcript's time of what it stands for
// (the run's message, the decision, the result), not the import's.
type timedSink struct {
	next engine.Sink
	at   time.Time
}

func (k *timedSink) Emit(ev engine.Event) error {
	if !k.at.IsZero() {
		ev.Time = k.at
	}
	return k.next.Emit(ev)
}

// replayer is a run's model and tools: the transcript's decisions, in
// order, and its results.
type replayer struct {
	t     *Transcript
	turns []Turn
	next  int
	sink  *timedSink
}

// Decide returns the transcript's next decision (an empty answer past its
// last: a run that ended with a tool result, interrupted).
func (r *replayer) Decide(context.Context, *engine.Request) (engine.Decision, error) {
	if r.next >= len(r.turns) {
		return engine.Decision{Text: "(the transcript ends here)"}, nil
	}
	t := r.turns[r.next]
	r.next++
	if !t.At.IsZero() {
		r.sink.at = t.At
	}
	return engine.Decision{Text: t.Text, Reasoning: t.Reasoning, ToolCalls: t.Calls, Usage: t.Usage}, nil
}

// tools are the run's tools: one for each name its calls use, answering
// with the recorded result, never running anything.
func (r *replayer) tools() []engine.Tool {
	seen := map[string]bool{}
	var out []engine.Tool
	for _, t := range r.turns {
		for _, c := range t.Calls {
			if seen[c.Name] {
				continue
			}
			seen[c.Name] = true
			out = append(out, engine.Tool{Name: c.Name, Description: "recorded: " + c.Name, Inline: true, Repeatable: true,
				Func: func(_ context.Context, call *engine.Call) (string, error) {
					res, ok := r.t.Results[call.ID]
					if !ok {
						return "", fmt.Errorf("the transcript has no result of this call (it was interrupted)")
					}
					if res.IsError {
						return "", fmt.Errorf("%s", res.Text)
					}
					return res.Text, nil
				}})
		}
	}
	return out
}

// importedPrice is the price of an imported session's model ("claude:NAME"):
// NAME's, as agentty knows prices.
func importedPrice(model string) (engine.Price, bool) {
	_, name, _ := strings.Cut(model, ":")
	return config.LookupPrice(name, nil)
}
