package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

type fakeTop struct{ cancelled []string }

func (f *fakeTop) Snapshot() TopView {
	return TopView{Title: "agentty top · 1 running · 1 queued", Head: "SESSION  STATE",
		Rows: []TopRow{{Session: "s1", Line: "s1       deciding"}, {Session: "s2", Line: "s2       queued", Queued: true}},
		Foot: []string{"POOL  WAITING", "default  1"}}
}

func (f *fakeTop) Cancel(s string) (string, error) {
	f.cancelled = append(f.cancelled, s)
	return "cancelled " + s, nil
}

// The fleet screen lists runs and requests, c cancels the one under the
// cursor and says so, Enter picks one to watch and quits.
func TestTopScreen(t *testing.T) {
	src := &fakeTop{}
	top := NewTop(src, 0)
	top.Update(tea.WindowSizeMsg{Width: 80, Height: 20})
	top.Update(top.Init()())
	v := top.View()
	for _, want := range []string{"1 running · 1 queued", "s1       deciding", "s2       queued", "default  1", "enter: watch it"} {
		if !strings.Contains(v, want) {
			t.Fatalf("the screen lacks %q:\n%s", want, v)
		}
	}
	top.Update(keyNamed("down"))
	_, cmd := top.Update(keyNamed("c"))
	top.Update(cmd())
	if len(src.cancelled) != 1 || src.cancelled[0] != "s2" || !strings.Contains(top.View(), "cancelled s2") {
		t.Fatalf("c: cancelled %v, screen:\n%s", src.cancelled, top.View())
	}
	top.Update(keyNamed("up"))
	if _, cmd := top.Update(keyNamed("enter")); cmd == nil || top.Watch != "s1" {
		t.Fatalf("enter picked %q", top.Watch)
	}
}
