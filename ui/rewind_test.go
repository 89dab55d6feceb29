package ui

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// rewindBackend is a forkBackend whose runs keep checkpoints: it records
// the rewinds it was asked for, and Clear opens a new session.
type rewindBackend struct {
	forkBackend
	rewound *[]int
	cleared *int
}

func (b rewindBackend) DiffFiles(context.Context, int) (string, error) { return "+hello", nil }
func (b rewindBackend) PlanRewind(_ context.Context, step int) (*RewindPlan, error) {
	return &RewindPlan{Step: step, Diff: "-hello", Remove: []string{"notes.txt"}}, nil
}
func (b rewindBackend) PlanUndo(context.Context) (*RewindPlan, error) {
	return nil, errors.New("the session was never rewound")
}
func (b rewindBackend) RewindFiles(_ context.Context, p *RewindPlan, _, _ bool) (string, error) {
	*b.rewound = append(*b.rewound, p.Step)
	return "Rewound.", nil
}
func (b rewindBackend) Clear() (Backend, []engine.Event, error) {
	*b.cleared++
	return forkedBackend{}, nil, nil
}

// TestRewindChoices: /rewind shows the plan and waits for a key; f rewinds
// the files alone; c at step 1 (no conversation before it) starts a new
// session rather than a fork of nothing; b at step 3 rewinds the files and
// forks before step 3; esc does nothing.
func TestRewindChoices(t *testing.T) {
	var rewound, forked []int
	cleared := 0
	open := func() *Model {
		m := New(Config{Model: "offline", Style: "notty", Backend: rewindBackend{forkBackend{forked: &forked}, &rewound, &cleared}})
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		return m
	}
	rewind := func(m *Model, step, key string) {
		t.Helper()
		m.input.SetValue("/rewind " + step)
		_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
		settle(m, cmd)
		if m.rewind == nil || !strings.Contains(m.View(), "f: files only") || !strings.Contains(m.View(), "remove notes.txt") {
			t.Fatalf("/rewind %s: no plan shown:\n%s", step, m.View())
		}
		_, cmd = m.Update(keyNamed(key))
		settle(m, cmd)
	}
	m := open()
	rewind(m, "1", "esc")
	if len(rewound)+len(forked)+cleared != 0 || m.rewind != nil {
		t.Fatalf("esc: rewound %v, forked %v, cleared %d", rewound, forked, cleared)
	}
	rewind(m, "1", "f")
	if len(rewound) != 1 || len(forked)+cleared != 0 {
		t.Fatalf("f: rewound %v, forked %v, cleared %d", rewound, forked, cleared)
	}
	rewind(open(), "1", "c")
	if len(rewound) != 1 || len(forked) != 0 || cleared != 1 {
		t.Fatalf("c at step 1: rewound %v, forked %v, cleared %d", rewound, forked, cleared)
	}
	rewind(open(), "3", "b")
	if len(rewound) != 2 || len(forked) != 1 || forked[0] != 2 {
		t.Fatalf("b at step 3: rewound %v, forked %v", rewound, forked)
	}
}

// TestCheckpointTroubleIsShown: a checkpoint that failed is a row of its
// step in the Timeline ("no checkpoint", its cause in the step's details)
// and a note in the chat; a file a checkpoint left out as not a regular
// file is said in the chat.
func TestCheckpointTroubleIsShown(t *testing.T) {
	at := time.Now()
	var evs []engine.Event
	e := func(kind engine.Kind, step int, phase engine.Phase, d any) {
		at = at.Add(time.Millisecond)
		evs = append(evs, engine.Event{V: engine.SchemaVersion, Session: "s", Run: "run-1", Step: step, Phase: phase, Kind: kind, Time: at, Data: d})
	}
	calls := []engine.ToolCall{{ID: "c1", Name: "write_file", Args: json.RawMessage(`{"path":"a.txt"}`)}}
	e(engine.KindRunStarted, 0, "", &engine.RunStarted{Task: "write"})
	e(engine.KindStepStarted, 1, engine.Perceive, &engine.StepStarted{})
	e(engine.KindDecision, 1, engine.Decide, &engine.Decided{ToolCalls: calls})
	e(engine.KindNotice, 1, engine.Act, &engine.Notice{Level: "warn", About: engine.NoticeCheckpoint, Message: "checkpoint: git add: disk full (the step goes on without one)"})
	e(engine.KindToolStarted, 1, engine.Act, &engine.ToolStarted{ID: "c1", Name: "write_file"})
	e(engine.KindToolFinished, 1, engine.Act, &engine.ToolFinished{ID: "c1", Name: "write_file", Status: engine.ToolOK, Result: "ok"})
	e(engine.KindStepFinished, 1, engine.Observe, &engine.StepFinished{ToolCalls: 1})
	e(engine.KindStepStarted, 2, engine.Perceive, &engine.StepStarted{})
	e(engine.KindDecision, 2, engine.Decide, &engine.Decided{ToolCalls: calls})
	e(engine.KindCheckpoint, 2, engine.Act, &engine.Checkpointed{Reason: engine.CheckpointBefore, Mode: "git", Tree: "t", Special: []string{"pipe.txt"}})
	m := agentConsole(t, evs, 160, 40)
	var row string
	for _, r := range m.tl.rows {
		if r.step == 1 && strings.Contains(r.text, "no checkpoint") {
			row = r.text + " " + r.status
		}
	}
	if row != "⚠ no checkpoint error" {
		for i, r := range m.tl.rows {
			t.Logf("%d %d %s %s %s", i, r.step, r.phase, r.text, r.status)
		}
		t.Errorf("step 1 has no row saying its checkpoint failed")
	}
	if dt := m.tl.details[1]; dt == nil || !strings.Contains(strings.Join(dt.errors, " "), "disk full") {
		t.Errorf("step 1's details do not say why: %+v", dt)
	}
	var chat []string
	for _, it := range m.chat.items {
		chat = append(chat, it.text)
	}
	if all := strings.Join(chat, "\n"); !strings.Contains(all, "git add: disk full") || !strings.Contains(all, "not a regular file") || !strings.Contains(all, "pipe.txt") {
		t.Errorf("the chat does not say it:\n%s", all)
	}
}
