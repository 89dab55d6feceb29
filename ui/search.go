package ui

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// Searcher searches the workspace's files and the past sessions, for the
// search the person opens with ctrl+f or /search. Search may do I/O (it
// brings the index up to date first) and is called from a command, off
// the Bubble Tea loop; it is safe for concurrent use.
type Searcher interface {
	// Search returns the k best chunks for query in scope ("all",
	// "workspace" or "sessions"), best first.
	Search(ctx context.Context, query, scope string, k int) ([]SearchHit, error)
}

// SearchIndexer is what a Searcher may also offer: bringing its index up
// to date (building it the first time). The console asks for it when the
// search opens and says "indexing…" until it is done.
type SearchIndexer interface {
	UpdateIndex(ctx context.Context) error
}

// SearchHit is one chunk found. Its text comes from files and sessions:
// the console sanitizes it where it takes it in.
type SearchHit struct {
	Source string // "workspace" or "sessions"
	Kind   string // file, user, answer, tool or memory
	Where  string // where it came from, in words ("path:12-40", "session ID (title), run R, step N, kind")
	// A file's chunk: its path in the workspace and its lines.
	Path               string
	StartLine, EndLine int
	// A session's chunk: the session, its title, the run and the step.
	Session, Title, Run string
	Step                int
	Score               float64
	Text                string
}

// searchScopes are the scopes tab goes through, in order.
var searchScopes = []string{"all", "workspace", "sessions"}

// searchK is how many hits a search asks for.
const searchK = 20

// The messages of the search's commands.
type (
	searchedMsg struct {
		seq  int // the search it answers: an older one's answer is dropped
		hits []SearchHit
		err  error
	}
	indexedMsg struct {
		seq int
		err error
	}
)

// searchView is the search, drawn over the panes: a query, the scope, the
// hits found, one of them chosen; and what is going on (indexing,
// searching) or went wrong, in one line.
type searchView struct {
	input    textinput.Model
	scope    int // in searchScopes
	hits     []SearchHit
	previews []string // a line of each hit's text, for the list
	sel      int
	query    string // what hits were found for ("" before the first search)
	searched string // the scope they were found in
	seq      int    // the newest search sent (numbered by Model.searchSeq, across searches opened)
	indexSeq int    // the indexing sent
	indexing bool
	busy     bool // a search is going
	pending  bool // enter was pressed while indexing: search when it is done
	err      string
	cancel   context.CancelFunc // cancels what the search's commands do, when it closes
}

// openSearch opens the search, the query typed in (/search QUERY), and
// starts bringing the index up to date; a query is searched for at once
// (after the indexing).
func (m *Model) openSearch(query string) tea.Cmd {
	if m.cfg.Search == nil {
		m.note = "search is not available here"
		return nil
	}
	in := textinput.New()
	in.Prompt = "› "
	in.Placeholder = "what to look for in the sessions and files"
	in.CharLimit = 500
	in.SetValue(query)
	in.CursorEnd()
	in.Focus()
	ctx, cancel := context.WithCancel(context.Background())
	s := &searchView{input: in, cancel: cancel}
	if m.search != nil { // /search while it is open: keep its scope
		s.scope = m.search.scope
		m.search.cancel()
	}
	m.search = s
	var cmds []tea.Cmd
	if ix, ok := m.cfg.Search.(SearchIndexer); ok {
		m.searchSeq++
		s.indexing, s.indexSeq = true, m.searchSeq
		cmds = append(cmds, updateIndex(ctx, ix, s.indexSeq))
	}
	if strings.TrimSpace(query) != "" {
		cmds = append(cmds, m.runSearch(ctx))
	}
	return tea.Batch(append(cmds, textinput.Blink)...)
}

// closeSearch closes the search and stops what its commands do.
func (m *Model) closeSearch() {
	if m.search != nil {
		m.search.cancel()
		m.search = nil
	}
}

// runSearch searches for the query typed, in the scope chosen; while the
// index is being brought up to date, the search waits for it.
func (m *Model) runSearch(ctx context.Context) tea.Cmd {
	s := m.search
	q := strings.TrimSpace(s.input.Value())
	if q == "" {
		s.err = "type what to look for, then enter"
		return nil
	}
	s.err = ""
	if s.indexing {
		s.pending = true
		return nil
	}
	m.searchSeq++
	s.seq, s.busy, s.pending = m.searchSeq, true, false
	return searchFor(ctx, m.cfg.Search, q, searchScopes[s.scope], s.seq)
}

// updateIndex brings the searcher's index up to date, off the loop.
func updateIndex(ctx context.Context, ix SearchIndexer, seq int) tea.Cmd {
	return func() tea.Msg { return indexedMsg{seq, ix.UpdateIndex(ctx)} }
}

// searchFor searches, off the loop.
func searchFor(ctx context.Context, s Searcher, query, scope string, seq int) tea.Cmd {
	return func() tea.Msg {
		hits, err := s.Search(ctx, query, scope, searchK)
		return searchedMsg{seq: seq, hits: hits, err: err}
	}
}

// searchCtx is a context that ends when the search closes.
func (s *searchView) ctx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	prev := s.cancel
	s.cancel = func() { prev(); cancel() }
	return ctx
}

// indexed applies the end of the indexing: a search asked for meanwhile
// runs now.
func (m *Model) indexed(msg indexedMsg) tea.Cmd {
	s := m.search
	if s == nil || !s.indexing || msg.seq != s.indexSeq {
		return nil
	}
	s.indexing = false
	if msg.err != nil {
		s.err = "indexing failed: " + flatten(Sanitize(msg.err.Error()))
		s.pending = false
		return nil
	}
	if s.pending {
		return m.runSearch(s.ctx())
	}
	return nil
}

// searched takes in the hits found, sanitized: their text comes from
// files and sessions.
func (m *Model) searched(msg searchedMsg) {
	s := m.search
	if s == nil || msg.seq != s.seq {
		return // closed, or a newer search was sent
	}
	s.busy = false
	if msg.err != nil {
		s.err = flatten(Sanitize(msg.err.Error()))
		return
	}
	s.err = ""
	s.query, s.searched = strings.TrimSpace(s.input.Value()), searchScopes[s.scope]
	s.hits, s.previews, s.sel = make([]SearchHit, len(msg.hits)), make([]string, len(msg.hits)), 0
	for i, h := range msg.hits {
		for _, f := range []*string{&h.Source, &h.Kind, &h.Where, &h.Path, &h.Session, &h.Title, &h.Run} {
			*f = flatten(Sanitize(*f))
		}
		h.Text = Sanitize(h.Text)
		if h.Where == "" || h.Session != "" {
			h.Where = hitWhere(h)
		}
		s.hits[i] = h
		s.previews[i] = previewLine(h.Text, s.query)
	}
}

// hitWhere says where a hit came from: a file's path and lines (when the
// searcher did not say), a session's id, step and kind before its title,
// which a narrow terminal cuts.
func hitWhere(h SearchHit) string {
	if h.Session == "" {
		return fmt.Sprintf("%s:%d-%d", h.Path, h.StartLine, h.EndLine)
	}
	w := fmt.Sprintf("session %s, step %d, %s", h.Session, h.Step, h.Kind)
	if h.Title != "" {
		w += ": " + h.Title
	}
	return w
}

// previewLine is the line of text to show under a hit: the first that
// holds a word of the query (by its first five letters, as agentty search
// does), else the first that is not blank; its spaces squeezed.
func previewLine(text, query string) string {
	var stems []string
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) >= 3 {
			stems = append(stems, string([]rune(w)[:min(len([]rune(w)), 5)]))
		}
	}
	first := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			continue
		}
		if first == "" {
			first = line
		}
		lower := strings.ToLower(line)
		for _, st := range stems {
			if strings.Contains(lower, st) {
				return line
			}
		}
	}
	return first
}

// searchKey handles a key while the search is open: enter searches for a
// new query, or opens the hit chosen; tab changes the scope (and searches
// again); ↑/↓ choose; esc closes; the rest is typed into the query.
func (m *Model) searchKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	s, k := m.search, m.keys
	switch {
	case key.Matches(msg, k.Dismiss):
		m.closeSearch()
		return m, nil
	case key.Matches(msg, k.SearchScope):
		s.scope = (s.scope + 1) % len(searchScopes)
		if strings.TrimSpace(s.input.Value()) == "" {
			return m, nil
		}
		return m, m.runSearch(s.ctx())
	case key.Matches(msg, k.CompletePrev):
		if len(s.hits) > 0 {
			s.sel = (s.sel + len(s.hits) - 1) % len(s.hits)
		}
		return m, nil
	case key.Matches(msg, k.CompleteNext):
		if len(s.hits) > 0 {
			s.sel = (s.sel + 1) % len(s.hits)
		}
		return m, nil
	case key.Matches(msg, k.Open):
		q := strings.TrimSpace(s.input.Value())
		if len(s.hits) == 0 || q != s.query || searchScopes[s.scope] != s.searched {
			return m, m.runSearch(s.ctx())
		}
		return m, m.openHit(s.hits[s.sel])
	}
	var cmd tea.Cmd
	s.input, cmd = s.input.Update(msg)
	return m, cmd
}

// openHit opens what a hit came from: a session's at its step (as the
// picker opens a session, the Timeline's cursor then on the step), a
// file's lines in a view of their own.
func (m *Model) openHit(h SearchHit) tea.Cmd {
	if h.Session == "" {
		m.detail = &details{lines: fileLines(h), title: h.Where + " (esc closes, ↑/↓ scroll)"}
		return nil
	}
	if m.backend != nil && m.backend.SessionID() == h.Session {
		m.closeSearch()
		m.jumpTo(h.Run, h.Step, h.Kind)
		return nil
	}
	switch {
	case m.running:
		m.search.err = "a run is going: wait for it (or ctrl+c) before opening another session"
		return nil
	case m.opening:
		m.search.err = "a session is being opened"
		return nil
	case m.cfg.Sessions == nil:
		m.search.err = "sessions cannot be opened here"
		return nil
	}
	m.closeSearch()
	m.opening = true
	m.jump = &searchJump{session: h.Session, run: h.Run, step: h.Step, kind: h.Kind}
	return openSession(m.cfg.Sessions, h.Session)
}

// searchJump is the step of a session being opened from the search, for
// the Timeline's cursor.
type searchJump struct {
	session, run, kind string
	step               int
}

// jumpTo puts the Timeline's cursor on the step of run, and the focus on
// the Timeline; when it has no row of that step, a note says which step
// the hit was.
func (m *Model) jumpTo(run string, step int, kind string) {
	if kind == "user" { // the run's task: where the run begins
		m.chat.showStep(run, 0)
	} else {
		m.chat.showStep(run, step)
	}
	if m.tl.selectStep(run, step, kind) {
		m.setFocus(focusTimeline)
		m.note = fmt.Sprintf("step %d, found by the search", step)
		return
	}
	m.note = fmt.Sprintf("the search found this in step %d", step)
}

// fileLines are a file hit's lines, numbered.
func fileLines(h SearchHit) []string {
	lines := strings.Split(strings.TrimRight(h.Text, "\n"), "\n")
	w := len(fmt.Sprint(h.StartLine + len(lines)))
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = styleDim.Render(fmt.Sprintf("%*d", w, max(h.StartLine, 1)+i)) + "  " + l
	}
	return out
}

// view draws the search in w×h cells.
func (s *searchView) view(w, h int) string {
	inner := max(w-2, 1)
	s.input.Width = max(inner-3, 1)
	lines := []string{fit(s.input.View(), inner)}
	var scopes []string
	for i, sc := range searchScopes {
		if i == s.scope {
			scopes = append(scopes, styleFocus.Render("["+sc+"]"))
		} else {
			scopes = append(scopes, " "+sc+" ")
		}
	}
	lines = append(lines, fit("scope "+strings.Join(scopes, " ")+styleDim.Render("  (tab)"), inner), "")
	rows := max(h-3-len(lines), 0) / 2 // each hit takes two lines
	if rows == 0 && h-3-len(lines) > 0 {
		rows = 1
	}
	top := max(0, min(s.sel-rows+1, len(s.hits)-rows))
	for i := top; i < min(top+rows, len(s.hits)); i++ {
		hit := s.hits[i]
		// The order is the ranking: BM25's scores on a small index are
		// too small to say anything in two decimals.
		head := fmt.Sprintf("%2d. %s", i+1, hit.Where)
		if i == s.sel { // marked with › too, for a terminal with no reverse video
			head = styleCursor.Render(fit("›"+head, inner))
		} else {
			head = fit(" "+head, inner)
		}
		lines = append(lines, head, fit("     "+styleDim.Render(s.previews[i]), inner))
	}
	foot := s.status()
	return strings.Join(box("Search sessions and files — enter searches, then opens; esc closes", true, w, h-3, lines, true), "\n") + "\n" +
		padRight(ansi.Truncate(foot, w, "…"), w)
}

// status is the line under the search: what is going on, what went wrong,
// or what was found.
func (s *searchView) status() string {
	switch {
	case s.indexing:
		return "indexing… (the search runs when the index is up to date)"
	case s.busy:
		return "searching…"
	case s.err != "":
		return styleErr.Render(s.err)
	case s.query == "":
		return styleDim.Render("type what to look for, then enter; ↑/↓ choose a hit, enter opens it")
	case len(s.hits) == 0:
		return fmt.Sprintf("nothing found for %q in %s", s.query, s.searched)
	}
	return styleDim.Render(fmt.Sprintf("%s for %q in %s · ↑/↓ choose, enter opens", count(len(s.hits), "hit"), s.query, s.searched))
}
