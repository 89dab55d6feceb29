package ui

import (
	"context"
	"path"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// The list of files "@" opens over the input: the workspace's files (asked
// of the backend once, off the Bubble Tea loop) that match what follows
// the @, fuzzily; ↑/↓ choose, tab puts the chosen path in, esc closes.

// mentionList is the state of the list: the files, and the choice.
type mentionList struct {
	files  []string
	asked  bool
	sel    int
	closed string // the input's text when esc closed the list
	// The matches of word, kept: the list is drawn on every frame, and a
	// workspace may have thousands of files.
	word    string
	matches []string
	matched bool
}

// filesListedMsg carries the workspace's files.
type filesListedMsg struct{ files []string }

// mentionWord returns what follows the "@" of the word being typed at the
// end of the input; ok is false when the last word is no mention.
func mentionWord(text string) (string, bool) {
	if text == "" || strings.ContainsAny(text[len(text)-1:], " \t\n") {
		return "", false
	}
	i := strings.LastIndexAny(text, " \t\n")
	return strings.CutPrefix(text[i+1:], "@")
}

// mentionMatches are the files the list shows for word: those whose path
// holds its letters in order, those whose name holds it whole first.
func (m *Model) mentionMatches(word string) []string {
	if ml := &m.mention; ml.matched && ml.word == word {
		return ml.matches
	}
	w := strings.ToLower(word)
	var prefix, whole, loose []string
	for _, f := range m.mention.files {
		lf := strings.ToLower(f)
		switch base := path.Base(strings.TrimSuffix(lf, "/")); {
		case strings.HasPrefix(base, w):
			prefix = append(prefix, f)
		case strings.Contains(base, w):
			whole = append(whole, f)
		case subsequence(lf, w):
			loose = append(loose, f)
		}
		if len(prefix) >= 8 {
			break
		}
	}
	out := append(append(prefix, whole...), loose...)
	out = out[:min(len(out), 8)]
	m.mention.word, m.mention.matches, m.mention.matched = word, out, true
	return out
}

// subsequence reports whether the letters of w appear in s in order.
func subsequence(s, w string) bool {
	for _, r := range w {
		i := strings.IndexRune(s, r)
		if i < 0 {
			return false
		}
		s = s[i+len(string(r)):]
	}
	return true
}

// mentionOpen returns the list's matches and whether it is open: the input
// has the focus, a mention is being typed, and esc has not closed it.
func (m *Model) mentionOpen() ([]string, bool) {
	v := m.input.Value()
	word, ok := mentionWord(v)
	if !ok || m.focus != focusInput || m.pause != nil || v == m.mention.closed {
		return nil, false
	}
	if _, ok := m.backend.(Attacher); !ok {
		return nil, false
	}
	return m.mentionMatches(word), true
}

// listFiles asks the backend for the workspace's files, once, when a
// mention is first typed.
func (m *Model) listFiles() tea.Cmd {
	a, ok := m.backend.(Attacher)
	if _, typing := mentionWord(m.input.Value()); !ok || !typing || m.mention.asked {
		return nil
	}
	m.mention.asked = true
	return func() tea.Msg { return filesListedMsg{a.Files(context.Background())} }
}

// mentionKey handles a key while the list is open; ok is false for a key
// it leaves to the input.
func (m *Model) mentionKey(msg tea.KeyMsg) bool {
	list, open := m.mentionOpen()
	if !open {
		return false
	}
	k := m.keys
	m.mention.sel = min(m.mention.sel, max(len(list)-1, 0))
	switch {
	case key.Matches(msg, k.CloseList):
		m.mention.closed = m.input.Value()
	case len(list) == 0:
		return false
	case key.Matches(msg, k.CompletePrev):
		m.mention.sel = (m.mention.sel + len(list) - 1) % len(list)
	case key.Matches(msg, k.CompleteNext):
		m.mention.sel = (m.mention.sel + 1) % len(list)
	case key.Matches(msg, k.Complete):
		v := m.input.Value()
		word, _ := mentionWord(v)
		m.setInput(v[:len(v)-len(word)] + list[m.mention.sel] + " ")
		m.mention.sel = 0
	default:
		return false
	}
	return true
}

// mentionView draws the open list, w wide and at most h high.
func (m *Model) mentionView(w, h int) []string {
	list, open := m.mentionOpen()
	if !open || h < 3 {
		return nil
	}
	inner := max(w-2, 1)
	lines := []string{}
	if len(list) == 0 {
		lines = append(lines, styleDim.Render("no file matches (esc closes)"))
	}
	for i, f := range list[:min(len(list), h-2)] {
		line := " " + flatten(Sanitize(f))
		if i == m.mention.sel {
			line = styleCursor.Render(padRight(ansi.Truncate("›"+line[1:], inner, "…"), inner))
		}
		lines = append(lines, ansi.Truncate(line, inner, "…"))
	}
	return box("Files (tab puts it in, ↑/↓ choose, esc closes)", true, w, len(lines), lines, false)
}
