package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// slashList is the list of commands that opens above the input as soon as
// "/" is typed, filtered by what follows. It is derived from the input's
// text each time; the list keeps only the selection, and the text esc
// closed it on (it opens again when the text changes).
type slashList struct {
	sel    int
	closed string
	shut   bool
}

// slashWord returns the command name being typed: the input's text when
// it is a "/" and a word with no space after it yet; ok is false otherwise
// (a message, a command with its arguments, "//" that escapes).
func slashWord(text string) (word string, ok bool) {
	rest, ok := strings.CutPrefix(text, "/")
	if !ok || strings.HasPrefix(rest, "/") || strings.ContainsAny(rest, " \t\n") {
		return "", false
	}
	return rest, true
}

// completions returns the commands the list shows, and whether it is
// open: the input has the focus, nothing is in front of it, a command
// name is being typed and esc has not closed the list on this text.
func (m *Model) completions() ([]command, bool) {
	if m.focus != focusInput || m.pause != nil || m.memForm != nil || m.picker != nil {
		return nil, false
	}
	text := m.input.Value()
	word, ok := slashWord(text)
	if !ok || m.slash.shut && m.slash.closed == text {
		return nil, false
	}
	var out []command
	for _, c := range m.allCommands() {
		if strings.HasPrefix(c.name, word) {
			out = append(out, c)
		}
	}
	return out, true
}

// slashKey handles a key while the list is open; ok is false for a key
// the list leaves to the input (text, enter on a whole command).
func (m *Model) slashKey(msg tea.KeyMsg) (cmd tea.Cmd, ok bool) {
	list, open := m.completions()
	if !open {
		return nil, false
	}
	k := m.keys
	m.slash.sel = min(m.slash.sel, max(len(list)-1, 0))
	switch {
	case key.Matches(msg, k.CloseList):
		m.slash.shut, m.slash.closed = true, m.input.Value()
		return nil, true
	case len(list) == 0:
		return nil, false
	case key.Matches(msg, k.CompletePrev):
		m.slash.sel = (m.slash.sel + len(list) - 1) % len(list)
		return nil, true
	case key.Matches(msg, k.CompleteNext):
		m.slash.sel = (m.slash.sel + 1) % len(list)
		return nil, true
	case key.Matches(msg, k.Complete):
		c := list[m.slash.sel]
		m.setInput("/" + c.name + map[bool]string{true: " ", false: ""}[c.args != ""])
		return nil, true
	case key.Matches(msg, k.RunCommand):
		c := list[m.slash.sel]
		if m.input.Value() == "/"+c.name || !c.needsArg {
			// Typed in full, or nothing to add: it runs as it is.
			m.setInput("/" + c.name)
			return nil, false
		}
		m.setInput("/" + c.name + " ")
		return nil, true
	}
	return nil, false
}

// setInput replaces the input's text, the cursor at its end.
func (m *Model) setInput(s string) {
	m.input.SetValue(s)
	m.input.CursorEnd()
	m.slash.sel = 0
	m.inputCache = nil
}

// slashView draws the open list, w cells wide and at most h lines high
// with its border, or nothing.
func (m *Model) slashView(w, h int) []string {
	list, open := m.completions()
	if !open || h < 3 {
		return nil
	}
	inner := max(w-2, 1)
	var lines []string
	if len(list) == 0 {
		word, _ := slashWord(m.input.Value())
		lines = append(lines, styleDim.Render(ansi.Truncate("no command /"+flatten(Sanitize(word))+" (// starts a message with /)", inner, "…")))
	}
	sel := min(m.slash.sel, max(len(list)-1, 0))
	rows := min(len(list), h-2)
	top := max(0, min(sel-rows+1, len(list)-rows))
	nameW := 0
	for _, c := range list {
		nameW = max(nameW, len(c.name)+len(c.args)+2)
	}
	for i := top; i < top+rows; i++ {
		c := list[i]
		name := "/" + c.name
		if c.args != "" {
			name += " " + c.args
		}
		line := "›" + padRight(name, nameW) + "  " + c.help
		if i == sel { // marked with › too, for a terminal with no reverse video
			line = styleCursor.Render(padRight(ansi.Truncate(line, inner, "…"), inner))
		} else {
			line = styleKey.Render(" "+padRight(name, nameW)) + "  " + styleDim.Render(c.help)
		}
		lines = append(lines, line)
	}
	title := "Commands (tab completes, enter runs, esc closes)"
	if rows < len(list) { // the rest are a key away: say so
		title = fmt.Sprintf("Commands %d–%d of %d (↑/↓ for more, tab completes, enter runs, esc closes)", top+1, top+rows, len(list))
	}
	return box(title, true, w, len(lines), lines, false)
}
