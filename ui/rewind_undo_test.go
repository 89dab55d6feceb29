package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// undoBackend is a rewindBackend whose plans are given, and which records
// what it was asked to do: "rewind 1", "undo", with "+others" when told
// to go over other sessions' files.
type undoBackend struct {
	rewindBackend
	plan, undo *RewindPlan
	undoErr    *error
	did        *[]string
}

func (b undoBackend) PlanRewind(_ context.Context, step int) (*RewindPlan, error) {
	p := *b.plan
	p.Step = step
	return &p, nil
}
func (b undoBackend) PlanUndo(context.Context) (*RewindPlan, error) {
	if *b.undoErr != nil {
		return nil, *b.undoErr
	}
	return b.undo, nil
}
func (b undoBackend) RewindFiles(_ context.Context, p *RewindPlan, _, others bool) (string, error) {
	what := fmt.Sprintf("rewind %d", p.Step)
	if p.Undo {
		what = "undo"
	}
	if others {
		what += "+others"
	}
	*b.did = append(*b.did, what)
	return "Did " + what + ".", nil
}

func newUndoModel(plan, undo *RewindPlan, undoErr *error, did *[]string) *Model {
	var forked []int
	rewound, cleared := []int{}, 0
	b := undoBackend{rewindBackend{forkBackend{forked: &forked}, &rewound, &cleared}, plan, undo, undoErr, did}
	m := New(Config{Model: "offline", Style: "notty", Backend: b})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	return m
}

// keysRun presses keys, running what each starts.
func keysRun(m *Model, keys ...string) {
	for _, k := range keys {
		_, cmd := m.Update(keyNamed(k))
		settle(m, cmd)
	}
}

// sendLine types line and sends it, running what it starts.
func sendSettled(m *Model, line string) {
	m.input.SetValue(line)
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	settle(m, cmd)
}

// TestRewindUndo: /rewind undo (and --undo) takes the last rewind back at
// once when it overwrites nothing and nobody's work, saying so in the
// chat; one that would overwrite files changed since shows its plan and
// waits for u. An undo that fails (never rewound) says why, and the next
// command works.
func TestRewindUndo(t *testing.T) {
	var did []string
	var undoErr error = errors.New("no checkpoint: the session was never rewound")
	plan := &RewindPlan{Remove: []string{"notes.txt"}}
	undo := &RewindPlan{Undo: true, Write: []string{"notes.txt"}}
	m := newUndoModel(plan, undo, &undoErr, &did)
	sendSettled(m, "/rewind undo")
	if len(did) != 0 || !strings.Contains(lastNote(m), "never rewound") {
		t.Fatalf("an undo with nothing to undo: did %v, said %q", did, lastNote(m))
	}
	sendSettled(m, "/rewind 1")
	keysRun(m, "f")
	if strings.Join(did, ",") != "rewind 1" || !strings.Contains(lastNote(m), "Did rewind 1") {
		t.Fatalf("the rewind after a failed undo: did %v, said %q", did, lastNote(m))
	}
	undoErr = nil
	for _, line := range []string{"/rewind undo", "/rewind --undo"} {
		did = nil
		sendSettled(m, line)
		if strings.Join(did, ",") != "undo" || m.rewind != nil || !strings.Contains(lastNote(m), "Did undo") {
			t.Fatalf("%s: did %v, plan shown %v, said %q", line, did, m.rewind != nil, lastNote(m))
		}
	}
	did = nil
	undo.HandChanged = []string{"notes.txt"}
	sendSettled(m, "/rewind undo")
	if len(did) != 0 || m.rewind == nil || !strings.Contains(m.View(), "u: take the files back") || !strings.Contains(m.View(), "u overwrites them") {
		t.Fatalf("an undo over a hand's change: did %v, shown:\n%s", did, m.View())
	}
	keysRun(m, "c") // not a key of an undo
	if len(did) != 0 || m.rewind == nil {
		t.Fatalf("c on an undo's plan: did %v", did)
	}
	keysRun(m, "u")
	if strings.Join(did, ",") != "undo" {
		t.Fatalf("u: did %v", did)
	}
}

// TestRewindAsksTwiceForOthersWork: a plan that removes a file another
// session made names it; f does not rewind it but asks again, naming it;
// f again, or any key but y, does nothing; esc drops the rewind; y does it,
// over the other session's file. The same for an undo.
func TestRewindAsksTwiceForOthersWork(t *testing.T) {
	var did []string
	var undoErr error
	theirs := "theirs.txt (session 0other22, step 1)"
	plan := &RewindPlan{Remove: []string{"mine.txt", "theirs.txt"}, Others: []string{theirs}}
	undo := &RewindPlan{Undo: true, Write: []string{"theirs.txt"}, Others: []string{theirs}}
	m := newUndoModel(plan, undo, &undoErr, &did)
	sendSettled(m, "/rewind 1")
	if v := m.View(); !strings.Contains(v, "Other sessions' work since") || !strings.Contains(v, theirs) {
		t.Fatalf("the plan does not name the other session's file:\n%s", v)
	}
	keysRun(m, "f")
	if v := m.View(); len(did) != 0 || !strings.Contains(v, "y: rewind them too") || !strings.Contains(v, theirs) {
		t.Fatalf("f on a plan over another session's file: did %v\n%s", did, v)
	}
	keysRun(m, "f", "b", "c", "u")
	if len(did) != 0 || m.rewind == nil {
		t.Fatalf("keys but y at the second question: did %v", did)
	}
	keysRun(m, "esc")
	if len(did) != 0 || m.rewind != nil || m.detail != nil {
		t.Fatalf("esc at the second question: did %v", did)
	}
	sendSettled(m, "/rewind 1")
	keysRun(m, "y") // y before the first choice is no choice
	if len(did) != 0 || m.rewind == nil {
		t.Fatalf("y on the plan: did %v", did)
	}
	keysRun(m, "f", "y")
	if strings.Join(did, ",") != "rewind 1+others" {
		t.Fatalf("f, y: did %v", did)
	}
	did = nil
	sendSettled(m, "/rewind undo")
	if len(did) != 0 || !strings.Contains(m.View(), theirs) {
		t.Fatalf("an undo over another session's file went at once: did %v\n%s", did, m.View())
	}
	keysRun(m, "u", "y")
	if strings.Join(did, ",") != "undo+others" {
		t.Fatalf("u, y on the undo: did %v", did)
	}
}
