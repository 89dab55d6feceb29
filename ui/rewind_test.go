package ui

import (
	"context"
	"strings"
	"testing"

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
func (b rewindBackend) RewindFiles(_ context.Context, p *RewindPlan, _ bool) (string, error) {
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
