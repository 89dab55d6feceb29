package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// details is a step's details (enter on a Timeline row), or a file's lines
// found by the search, drawn over the whole terminal: lines and the first
// one shown.
type details struct {
	lines []string
	top   int
	title string // "" for a step's details
}

// update scrolls the details; it reports whether the key closes them.
func (d *details) update(msg tea.KeyMsg, k keyMap) (closed bool) {
	last := max(len(d.lines)-1, 0)
	switch {
	case key.Matches(msg, k.Close):
		return true
	case key.Matches(msg, k.Up):
		d.top = max(d.top-1, 0)
	case key.Matches(msg, k.Down):
		d.top = min(d.top+1, last)
	case key.Matches(msg, k.PageUp):
		d.top = max(d.top-10, 0)
	case key.Matches(msg, k.PageDown):
		d.top = min(d.top+10, last)
	}
	return false
}

// view draws the details in w×h cells.
func (d *details) view(w, h int) string {
	lines := d.lines[min(d.top, len(d.lines)):]
	title := d.title
	if title == "" {
		title = "Step details (esc closes, ↑/↓ scroll)"
	}
	return strings.Join(box(title, true, w, h-3, lines, false), "\n") + "\n" +
		styleDim.Render(ansi.Truncate(fmt.Sprintf("line %d of %d", d.top+1, len(d.lines)), w, "…"))
}
