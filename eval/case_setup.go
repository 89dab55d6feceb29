package eval

// What a run of a case runs with: the suite's engine, or one made for it
// with its settings (agent, model, limits, answers, workspace), its
// recording's decisions in place of the model (replaying) or its recorded
// tool results (comparing).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentty/agentty/agents"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/replay"
	"github.com/agentty/agentty/hooks"
)

// needsRecording marks a replayed decision that the recording cannot give:
// the request changed, or there is no such decision.
type needsRecording struct{ err error }

func (e *needsRecording) Error() string { return e.err.Error() }
func (e *needsRecording) Unwrap() error { return e.err }

// recordingModel plays a recording and marks its failures as needing a
// new recording.
type recordingModel struct{ m replay.Model }

func (m recordingModel) Decide(ctx context.Context, req *engine.Request) (engine.Decision, error) {
	d, err := m.m.Decide(ctx, req)
	if err != nil {
		return d, engine.Permanent(&needsRecording{err})
	}
	return d, nil
}

// caseSetup is what a run of a case runs with: its engine, the settings
// it runs with (kept beside its recording), and done, to call after it.
type caseSetup struct {
	eng      *engine.Engine
	settings Settings
	done     func()
}

// setupFor is the setup of job j: the case's settings over Base and,
// replaying or comparing, over what its recording ran with; its engine
// plays the recording in ReplayDir, or runs live with the tool results of
// the one in ToolsFrom. Without a recording, the status is
// NeedsRecording.
func (r *Runner) setupFor(ctx context.Context, j evalJob) (*caseSetup, string, error) {
	eff := j.c.Settings.Over(r.Base)
	from := cmp.Or(r.ReplayDir, r.ToolsFrom)
	var events []engine.Event
	if from != "" {
		var err error
		if events, err = readRecording(recordingPath(from, j)); err != nil {
			return nil, NeedsRecording, err
		}
		rec, err := recordedSettings(from, j.c, events)
		if err != nil {
			return nil, Failed, err
		}
		if r.ReplayDir == "" {
			rec.Model = "" // a comparison's live runs are the model's of now
		}
		eff = eff.Over(rec)
	}
	cs := &caseSetup{done: func() {}}
	if from == "" && j.c.Settings.empty() && r.Base.Answers == nil && r.Base.Workspace == "" {
		cs.eng, cs.settings = r.Engine, ranWith(eff, r.Engine.Config())
		return cs, "", nil
	}
	cfg, err := r.configure(ctx, eff, cs)
	if err != nil {
		cs.done()
		return nil, Failed, err
	}
	switch {
	case r.ReplayDir != "":
		cfg = playing(cfg, events, recordingPath(r.ReplayDir, j))
	case r.ToolsFrom != "":
		if err := eachRegistry(&cfg, newRecordedTools(events).wrap); err != nil {
			cs.done()
			return nil, Failed, err
		}
	}
	cs.eng, cs.settings = engine.New(cfg), ranWith(eff, cfg)
	if err := cs.eng.Err(); err != nil {
		cs.done()
		return nil, Failed, err
	}
	return cs, "", nil
}

// ranWith is what a run of settings s with the engine's configuration cfg
// runs with, all told.
func ranWith(s Settings, cfg engine.Config) Settings {
	s.Agent, s.MaxSteps, s.MaxTokens, s.MaxCost = cfg.Agent, cfg.MaxSteps, cfg.MaxTokens, cfg.MaxCost
	if _, ok := cfg.Model.(recordingModel); !ok {
		s.Model = cfg.ModelName
	}
	return s
}

// configure is the runner's Config with the settings s: the agent, the
// model (live), the limits, the gate's answers and the workspace (whose
// copy cs.done removes).
func (r *Runner) configure(ctx context.Context, s Settings, cs *caseSetup) (engine.Config, error) {
	cfg := r.Config
	if s.Agent != "" {
		cfg.Agent = agents.NormalName(s.Agent)
	}
	cfg.MaxSteps = cmp.Or(s.MaxSteps, cfg.MaxSteps)
	cfg.MaxTokens = cmp.Or(s.MaxTokens, cfg.MaxTokens)
	cfg.MaxCost = cmp.Or(s.MaxCost, cfg.MaxCost)
	if g, ok := cfg.Gate.(Gate); ok {
		g.Answers = s.Answers
		cfg.Gate = g
	}
	if s.Model != "" && s.Model != cfg.ModelName && r.ReplayDir == "" {
		if r.Models == nil {
			return cfg, fmt.Errorf("model %s: this runner picks no model per case", s.Model)
		}
		m, name, err := r.Models(s.Model)
		if err != nil {
			return cfg, fmt.Errorf("model: %w", err)
		}
		cfg.Model, cfg.ModelName = m, name
	}
	if s.Workspace == "" {
		return cfg, ctx.Err()
	}
	if r.Workspace == nil {
		return cfg, errors.New("workspace: this runner makes no workspace per case")
	}
	dir, err := os.MkdirTemp("", "agentty-eval-*")
	if err != nil {
		return cfg, err
	}
	cs.done = func() { os.RemoveAll(dir) }
	if err := copyFixture(r.Suite.Dir, s.Workspace, dir); err != nil {
		return cfg, err
	}
	ts, release, err := r.Workspace(dir)
	if err != nil {
		return cfg, fmt.Errorf("workspace: %w", err)
	}
	cs.done = func() { release(); os.RemoveAll(dir) }
	cfg.Checkpoint = nil // a copy thrown away after the run: nothing to rewind
	return cfg, eachRegistry(&cfg, func(reg *engine.Registry) (*engine.Registry, error) { return swapTools(reg, ts) })
}

// playing is cfg with the recording's decisions, events of the file
// path, in place of every model.
func playing(cfg engine.Config, events []engine.Event, path string) engine.Config {
	cfg.Model = recordingModel{replay.NewModel(replay.FromEvents(events))}
	cfg.Hooks = hooks.Recorded(events) // what the hooks decided when recorded, not the hooks run again
	cfg.ModelName = "replay of " + filepath.Base(path)
	cfg.Agents = append([]engine.Agent(nil), cfg.Agents...)
	for i := range cfg.Agents {
		cfg.Agents[i].Model, cfg.Agents[i].ModelName = cfg.Model, cfg.ModelName // the agents' decisions are in the one recording too
	}
	if cfg.Compact.Model != nil {
		cfg.Compact.Model = cfg.Model
	}
	return cfg
}

// eachRegistry replaces cfg's tools, and each agent's, with what f makes
// of them.
func eachRegistry(cfg *engine.Config, f func(*engine.Registry) (*engine.Registry, error)) error {
	var err error
	if cfg.Tools, err = f(cfg.Tools); err != nil {
		return err
	}
	cfg.Agents = append([]engine.Agent(nil), cfg.Agents...)
	for i := range cfg.Agents {
		if cfg.Agents[i].Tools, err = f(cfg.Agents[i].Tools); err != nil {
			return err
		}
	}
	return nil
}

// swapTools is reg with each tool that ts has one of the same name of
// replaced by that one (made for another folder), keeping the policy and
// time limit reg's had.
func swapTools(reg *engine.Registry, ts []engine.Tool) (*engine.Registry, error) {
	if reg == nil {
		return nil, nil
	}
	byName := make(map[string]engine.Tool, len(ts))
	for _, t := range ts {
		byName[t.Name] = t
	}
	all := reg.Tools()
	for i, t := range all {
		if n, ok := byName[t.Name]; ok {
			n.Policy, n.Timeout = t.Policy, t.Timeout
			all[i] = n
		}
	}
	return engine.NewRegistry(all...)
}
