// Package importer makes agentty sessions of other agents' transcripts:
// Claude Code's (~/.claude/projects/PROJECT/SESSION.jsonl) and Codex's
// rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl). A transcript is
// read a line at a time (never whole) into runs of decisions and tool
// results, and each run is replayed through agentty's own engine as soon
// as it is read, with the decisions as its model and the results as its
// tools: nothing is run again, the results stay observations, and the
// journal is agentty's own, so every tool (the console, show, export,
// trace, search, fork) works on it. What is held at once is one run and
// the session's history, never the file: a Claude Code transcript is read
// twice (its chain of line ids first, then the lines on it).
package importer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// Transcript is what a transcript says of itself, from a first read;
// Import reads its runs.
type Transcript struct {
	Source string // "claude" or "codex"
	ID     string // the other agent's session id
	Cwd    string // the folder it was worked on in
	Model  string
	// Parent is, for a Claude Code sub-agent's transcript, the session
	// it is part of.
	Parent string
	// Fingerprint is a hash of the file's bytes: two files of one session
	// id (a copy that went on, a fork) are told apart by it.
	Fingerprint string
	// Runs is the number of runs Import made (set by Import).
	Runs int
	// Notes say what was left out: lines that could not be read (with
	// their line), branches not on the live chain, sub-agents' messages.
	Notes []string

	// runs reads the transcript again and hands each run, whole, to emit.
	runs func(ctx context.Context, emit func(*Run) error) error
}

// Run is a person's message and the decisions that answered it, with the
// results of their calls.
type Run struct {
	Task    string
	At      time.Time
	Turns   []Turn
	Results map[string]Result // by call id
	Model   string            // the model that answered, as far as the transcript said
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

// ErrNoPrompt is Import's error for a transcript with no message of a
// person's in it.
var ErrNoPrompt = errors.New("the transcript has no message of a person to import")

// Import journals t as a new session of store and returns its id. Each
// run is replayed through the engine as it is read: its decisions are the
// model's, the recorded results its tools' answers, at the transcript's
// times (the session's too).
func Import(ctx context.Context, store *sessions.Store, t *Transcript) (string, error) {
	j, err := store.Create()
	if err != nil {
		return "", err
	}
	j.TimesFromEvents()
	first, err := replay(ctx, j, t)
	if err == nil && t.Runs == 0 {
		err = ErrNoPrompt
	}
	if cerr := j.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		store.Remove(j.ID) // no half-made session: a retry starts clean
		return "", err
	}
	title := engine.OneLine(first, 50) + " [" + t.Source + " " + shortID(t.ID) + "]"
	return j.ID, store.Rename(j.ID, title)
}

// Origin is what an imported session's settings say made it: the source
// and the file's fingerprint.
func (t *Transcript) Origin() string { return "import:" + t.Source + "@" + t.Fingerprint }

// replay runs t's runs through the engine into the journal j as they are
// read, and returns the first run's task.
func replay(ctx context.Context, j *sessions.Journal, t *Transcript) (string, error) {
	s := engine.NewSession(j.ID)
	sink := &timedSink{next: j}
	var first string
	err := t.runs(ctx, func(run *Run) error {
		t.Runs++
		if t.Runs == 1 {
			first = run.Task
			s.UseSettings(engine.Settings{Workspace: t.Cwd, Origin: t.Origin()})
		}
		r := &replayer{run: run, sink: sink}
		reg, err := engine.NewRegistry(r.tools()...)
		if err != nil {
			return err
		}
		e := engine.New(engine.Config{Model: r, ModelName: t.Source + ":" + cmpOr(cmpOr(run.Model, t.Model), "unknown"), Tools: reg, MaxSteps: max(len(run.Turns)+1, 1),
			Compact: engine.Compaction{Off: true}, Budget: 1 << 30, MaxCalls: 1 << 12, Prices: importedPrice})
		if err := e.Err(); err != nil {
			return err
		}
		sink.at = run.At
		res := e.Run(ctx, s, run.Task, sink)
		if res.Err != nil {
			return fmt.Errorf("run %d of the transcript: %w", t.Runs, res.Err)
		}
		if left := len(run.Turns) - r.next; left > 0 { // the run ended on a decision with no call before its last
			t.Notes = append(t.Notes, fmt.Sprintf("run %d: %d decisions after its answer were not imported", t.Runs, left))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return first, j.Flush()
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
	run  *Run
	next int
	sink *timedSink
}

// Decide returns the transcript's next decision (an empty answer past its
// last: a run that ended with a tool result, interrupted).
func (r *replayer) Decide(context.Context, *engine.Request) (engine.Decision, error) {
	if r.next >= len(r.run.Turns) {
		return engine.Decision{Text: "(the transcript ends here)"}, nil
	}
	t := r.run.Turns[r.next]
	r.next++
	if !t.At.IsZero() {
		r.sink.at = t.At
	}
	return engine.Decision{Text: t.Text, Reasoning: t.Reasoning, ToolCalls: t.Calls, Usage: t.Usage}, nil
}

// FullHistory says that the replayer reads nothing of its requests: they
// are not trimmed, and a decision with no usage recorded costs nothing
// (the transcript said none; nothing is estimated in its place).
func (r *replayer) FullHistory() bool { return true }

// tools are the run's tools: one for each name its calls use, answering
// with the recorded result, never running anything.
func (r *replayer) tools() []engine.Tool {
	seen := map[string]bool{}
	var out []engine.Tool
	for _, t := range r.run.Turns {
		for _, c := range t.Calls {
			if seen[c.Name] {
				continue
			}
			seen[c.Name] = true
			out = append(out, engine.Tool{Name: c.Name, Description: "recorded: " + c.Name, Inline: true, Repeatable: true,
				Func: func(_ context.Context, call *engine.Call) (string, error) {
					res, ok := r.run.Results[call.ID]
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
