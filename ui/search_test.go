package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// fakeSearcher is the search in memory: hits by scope, the calls it got,
// and an error when one is set. It is a SearchIndexer too.
type fakeSearcher struct {
	mu      sync.Mutex
	hits    map[string][]SearchHit // by scope
	err     error
	indexed int
	calls   []string // "query|scope"
}

var (
	_ Searcher      = (*fakeSearcher)(nil)
	_ SearchIndexer = (*fakeSearcher)(nil)
)

func (f *fakeSearcher) Search(ctx context.Context, query, scope string, k int) ([]SearchHit, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, query+"|"+scope)
	if f.err != nil {
		return nil, f.err
	}
	hits := f.hits[scope]
	return hits[:min(k, len(hits))], nil
}

func (f *fakeSearcher) UpdateIndex(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.indexed++
	return nil
}

// searchHits are hits of the journal offline-remember.jsonl (session
// 0mx2o2atnfhjd) and of a file, with foreign text that must not reach the
// screen raw.
var searchHits = []SearchHit{
	{Source: "sessions", Kind: "memory", Where: "session 0mx2o2atnfhjd (remember that my name is Ada), run-1, step 1, memory",
		Session: "0mx2o2atnfhjd", Title: "remember that my name is Ada", Run: "run-1", Step: 1, Score: 0.8, Text: "name: Ada"},
	{Source: "workspace", Kind: "file", Where: "notes/names.md:3-5", Path: "notes/names.md", StartLine: 3, EndLine: 5, Score: 0.5,
		Text: "# Names\n\x1b]0;pwned\x07Ada is \x1b[31mred\x1b[0m\nthe name\tAda\n"},
}

// searchSessions opens the session of offline-remember.jsonl.
type searchSessions struct {
	t      *testing.T
	opened []string
}

func (s *searchSessions) List() ([]SessionInfo, error) { return nil, nil }
func (s *searchSessions) Open(id string) (Backend, []engine.Event, error) {
	s.opened = append(s.opened, id)
	b, err := os.ReadFile(filepath.Join("testdata", "journals", "offline-remember.jsonl"))
	if err != nil {
		s.t.Fatal(err)
	}
	events, sess, err := readJournal(b, "offline-remember.jsonl", id)
	if err != nil {
		s.t.Fatal(err)
	}
	return &memBackend{s: sess}, events, nil
}

func newSearchConsole(t *testing.T, f *fakeSearcher) (*Model, *searchSessions) {
	t.Helper()
	ss := &searchSessions{t: t}
	m := New(Config{Style: "notty", Backend: &memBackend{s: engine.NewSession("0mx2new000001")}, Sessions: ss, Search: f})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	return m, ss
}

// pressRun sends keys (names as tea writes them, or text) and runs the
// commands that follow.
func pressRun(m *Model, ks ...string) {
	for _, k := range ks {
		_, cmd := m.Update(keyNamed(k))
		settle(m, cmd)
	}
}

func typeText(m *Model, s string) {
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)})
	settle(m, cmd)
}

// TestSearchIndexesThenSearches: ctrl+f opens the search and brings the
// index up to date; enter meanwhile waits for it ("indexing…"), then the
// search runs and its hits are listed.
func TestSearchIndexesThenSearches(t *testing.T) {
	f := &fakeSearcher{hits: map[string][]SearchHit{"all": searchHits}}
	m, _ := newSearchConsole(t, f)
	_, open := m.Update(keyNamed("ctrl+f")) // the indexing is not run yet
	if m.search == nil {
		t.Fatal("ctrl+f opened no search")
	}
	if v := m.View(); !strings.Contains(v, "indexing…") {
		t.Fatalf("no indexing… while the index is brought up to date:\n%s", v)
	}
	typeText(m, "Ada")
	pressRun(m, "enter")
	if len(f.calls) != 0 {
		t.Fatalf("searched before the index was up to date: %v", f.calls)
	}
	settle(m, open) // the indexing ends: the search asked for runs
	if f.indexed != 1 || len(f.calls) != 1 || f.calls[0] != "Ada|all" {
		t.Fatalf("indexed %d, searches %v; want 1 and [Ada|all]", f.indexed, f.calls)
	}
	v := m.View()
	for _, want := range []string{"› 1. session 0mx2o2atnfhjd, step 1, memory: remember that my name is Ada", "name: Ada",
		"2. notes/names.md:3-5", "␛]0;pwned^GAda is ␛[31mred␛[0m", "2 hits for \"Ada\" in all"} {
		if !strings.Contains(v, want) {
			t.Errorf("the search does not show %q:\n%s", want, v)
		}
	}
	checkFrame(t, v, 120, 40)
	for _, size := range [][2]int{{80, 24}, {20, 8}, {300, 100}} {
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		checkFrame(t, m.View(), size[0], size[1])
	}
}

// TestSearchScopeAndChoice: tab changes the scope and searches again; ↑/↓
// choose a hit, round the list; enter on a file's hit shows its lines,
// numbered and sanitized, esc goes back to the hits and esc again closes
// the search.
func TestSearchScopeAndChoice(t *testing.T) {
	f := &fakeSearcher{hits: map[string][]SearchHit{"all": searchHits, "workspace": searchHits[1:]}}
	m, _ := newSearchConsole(t, f)
	pressRun(m, "ctrl+f")
	typeText(m, "Ada")
	pressRun(m, "enter", "tab")
	if got := strings.Join(f.calls, " "); got != "Ada|all Ada|workspace" {
		t.Fatalf("searches %q, want Ada|all then Ada|workspace", got)
	}
	if v := m.View(); !strings.Contains(v, "[workspace]") || !strings.Contains(v, "1 hit for \"Ada\" in workspace") {
		t.Fatalf("the scope is not workspace:\n%s", v)
	}
	pressRun(m, "tab", "tab") // sessions (nothing), then all again
	if got := f.calls[len(f.calls)-2:]; got[0] != "Ada|sessions" || got[1] != "Ada|all" {
		t.Fatalf("tab went through %v, want sessions then all", got)
	}
	pressRun(m, "up") // round to the last: the file
	if m.search.sel != 1 {
		t.Fatalf("up from the first hit chose %d, want the last (1)", m.search.sel)
	}
	pressRun(m, "enter")
	if m.detail == nil {
		t.Fatal("enter on a file's hit shows no lines")
	}
	v := m.View()
	for _, want := range []string{"notes/names.md:3-5 (esc closes", "3  # Names", "4  ␛]0;pwned^GAda is ␛[31mred␛[0m", "5  the name"} {
		if !strings.Contains(v, want) {
			t.Errorf("the file's lines do not show %q:\n%s", want, v)
		}
	}
	checkFrame(t, v, 120, 40)
	pressRun(m, "esc")
	if m.detail != nil || m.search == nil {
		t.Fatal("esc on the file's lines did not go back to the hits")
	}
	pressRun(m, "esc")
	if m.search != nil {
		t.Fatal("esc did not close the search")
	}
	if len(f.calls) != 4 {
		t.Errorf("opening a hit searched again: %v", f.calls)
	}
}

// TestSearchOpensSessionAtStep: enter on a session's hit opens the session
// as the picker does, the Timeline's cursor on the step (the act row of a
// memory fact), the Timeline focused; a hit of the session that is open
// only moves the cursor.
func TestSearchOpensSessionAtStep(t *testing.T) {
	f := &fakeSearcher{hits: map[string][]SearchHit{"all": searchHits}}
	m, ss := newSearchConsole(t, f)
	pressRun(m, "ctrl+f")
	typeText(m, "Ada")
	pressRun(m, "enter", "enter")
	if len(ss.opened) != 1 || ss.opened[0] != "0mx2o2atnfhjd" {
		t.Fatalf("sessions opened: %v, want 0mx2o2atnfhjd", ss.opened)
	}
	if m.search != nil || m.backend.SessionID() != "0mx2o2atnfhjd" {
		t.Fatalf("the search is still open (%v) or the session is %s", m.search != nil, m.backend.SessionID())
	}
	r, ok := m.tl.selected()
	if !ok || r.step != 1 || r.phase != engine.Act || m.focus != focusTimeline {
		t.Fatalf("the cursor is on step %d %s (focus %d), want step 1's act row in the focused Timeline", r.step, r.phase, m.focus)
	}
	if !strings.Contains(m.View(), "step 1, found by the search") {
		t.Errorf("the status line does not say which step:\n%s", m.View())
	}

	// The same session: the cursor moves to the answer's decide row.
	f.hits["all"] = []SearchHit{{Source: "sessions", Kind: "answer", Session: "0mx2o2atnfhjd", Run: "run-1", Step: 2, Text: "Ada"}}
	pressRun(m, "ctrl+f")
	typeText(m, "Ada")
	pressRun(m, "enter", "enter")
	if len(ss.opened) != 1 {
		t.Fatalf("the session open was opened again: %v", ss.opened)
	}
	if r, _ := m.tl.selected(); r.step != 2 || r.phase != engine.Decide {
		t.Fatalf("the cursor is on step %d %s, want step 2's decide row", r.step, r.phase)
	}
}

// TestSearchErrorsAndLateAnswers: an error is one line in the search; an
// answer to a search that a newer one replaced, or that came after the
// search closed, changes nothing; a search with no Searcher says so.
func TestSearchErrorsAndLateAnswers(t *testing.T) {
	f := &fakeSearcher{hits: map[string][]SearchHit{"all": searchHits}, err: errors.New("search: index.db: database is locked\n(try again)")}
	m, _ := newSearchConsole(t, f)
	pressRun(m, "ctrl+f")
	pressRun(m, "enter")
	if !strings.Contains(m.View(), "type what to look for, then enter") {
		t.Errorf("enter on no query says nothing:\n%s", m.View())
	}
	typeText(m, "Ada")
	pressRun(m, "enter")
	v := m.View()
	if !strings.Contains(v, "search: index.db: database is locked (try again)") {
		t.Fatalf("the error is not one line in the search:\n%s", v)
	}
	checkFrame(t, v, 120, 40)

	f.err = nil
	_, late := m.Update(keyNamed("enter")) // its answer comes after the next search's
	pressRun(m, "tab")
	settle(m, late)
	if m.search.searched != "workspace" {
		t.Errorf("a late answer replaced the newer one: the hits are of %q", m.search.searched)
	}
	_, late = m.Update(keyNamed("tab"))
	pressRun(m, "esc")
	settle(m, late)
	if m.search != nil {
		t.Error("an answer after the search closed opened it again")
	}

	m = New(Config{Style: "notty", Backend: &memBackend{s: engine.NewSession("s")}})
	m.Update(keyNamed("ctrl+f"))
	if m.search != nil || m.note != "search is not available here" {
		t.Errorf("ctrl+f with no searcher: search %v, note %q", m.search != nil, m.note)
	}
}

// TestSlashSearch: /search QUERY opens the search on the query and
// searches at once (after the indexing); ctrl+f is not the input's.
func TestSlashSearch(t *testing.T) {
	f := &fakeSearcher{hits: map[string][]SearchHit{"all": searchHits}}
	m, _ := newSearchConsole(t, f)
	typeText(m, "/search name Ada")
	pressRun(m, "enter")
	if m.search == nil || f.indexed != 1 || len(f.calls) != 1 || f.calls[0] != "name Ada|all" {
		t.Fatalf("/search: open %v, indexed %d, searches %v", m.search != nil, f.indexed, f.calls)
	}
	if m.input.Value() != "" {
		t.Errorf("the command line stayed in the input: %q", m.input.Value())
	}
	pressRun(m, "esc", "?")
	if v := m.View(); !strings.Contains(v, "ctrl+f") || !strings.Contains(v, "search sessions and files") {
		t.Errorf("the help (?) does not list ctrl+f:\n%s", v)
	}
	pressRun(m, "?")
	typeText(m, "ab")
	pressRun(m, "left", "ctrl+f")
	if m.search == nil {
		t.Fatal("ctrl+f in the input did not open the search")
	}
}
