package ui_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/agentty/agentty/ui"
)

// frameSearcher answers every search with the same hits: two of a past
// session and two of files, as the index of such a home would.
type frameSearcher struct{}

func (frameSearcher) UpdateIndex(context.Context) error { return nil }
func (frameSearcher) Search(_ context.Context, query, scope string, k int) ([]ui.SearchHit, error) {
	hits := []ui.SearchHit{
		{Source: "sessions", Kind: "memory", Session: "0mx2test0003", Title: "remember that the retry policy is five attempts",
			Run: "run-1", Step: 1, Score: 0.9, Text: "retry policy: five attempts",
			Where: "session 0mx2test0003 (remember that the retry policy is five attempts), run-1, step 1, memory"},
		{Source: "workspace", Kind: "file", Path: "docs/retries.md", StartLine: 1, EndLine: 6, Score: 0.7,
			Where: "docs/retries.md:1-6",
			Text:  "# Retries\n\nThe retry policy: at most five attempts,\nthe first delay 500 ms, doubled each time,\nnever more than 30 s,\nRetry-After honoured.\n"},
		{Source: "sessions", Kind: "user", Session: "0mx2test0003", Title: "remember that the retry policy is five attempts",
			Run: "run-1", Step: 0, Score: 0.6, Text: "remember that the retry policy is five attempts",
			Where: "session 0mx2test0003 (remember that the retry policy is five attempts), run-1, step 0, user"},
		{Source: "workspace", Kind: "file", Path: "engine/retry.go", StartLine: 1, EndLine: 3, Score: 0.4,
			Where: "engine/retry.go:1-3", Text: "package engine\n\n// Retry policy: exponential backoff with full jitter.\n"},
	}
	if scope == "workspace" {
		hits = []ui.SearchHit{hits[1], hits[3]}
	}
	return hits[:min(k, len(hits))], nil
}

// TestSearchFrames: golden frames, at 120×40 and 80×24, of the search
// (ctrl+f) with its hits, in the scope all and in the workspace (tab), and
// of a file's lines opened from it.
func TestSearchFrames(t *testing.T) {
	sizes := []struct{ w, h int }{{120, 40}, {80, 24}}
	search := func(t *testing.T, tm *teatest.TestModel) {
		tm.Send(tea.KeyMsg{Type: tea.KeyCtrlF})
		waitFor(t, tm, "Search sessions and files")
		tm.Type("retry policy")
		tm.Send(key(tea.KeyEnter))
		waitFor(t, tm, "4 hits for")
	}
	scenes := []struct {
		name string
		play func(t *testing.T, tm *teatest.TestModel)
	}{
		{"search-hits", search},
		{"search-workspace", func(t *testing.T, tm *teatest.TestModel) {
			search(t, tm)
			tm.Send(key(tea.KeyTab))
			waitFor(t, tm, "2 hits for")
			tm.Send(key(tea.KeyDown))
		}},
		{"search-file", func(t *testing.T, tm *teatest.TestModel) {
			search(t, tm)
			tm.Send(key(tea.KeyDown))
			tm.Send(key(tea.KeyEnter))
			waitFor(t, tm, "docs/retries.md:1-6 (esc closes")
		}},
	}
	for _, sz := range sizes {
		for _, sc := range scenes {
			name := fmt.Sprintf("%s-%dx%d", sc.name, sz.w, sz.h)
			t.Run(name, func(t *testing.T) {
				cfg := consoleConfig(t, false, nil)
				cfg.Search = frameSearcher{}
				m := ui.New(cfg)
				tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(sz.w, sz.h))
				sc.play(t, tm)
				if err := tm.Quit(); err != nil {
					t.Fatal(err)
				}
				fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*ui.Model)
				frame := fm.View()
				fm.Cancel()
				ui.CheckFrame(t, frame, sz.w, sz.h)
				golden.RequireEqual(t, []byte(frame)) // go test ./ui -update rewrites testdata
			})
		}
	}
}
