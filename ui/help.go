package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// The help below the status line.
const (
	helpNone = iota
	helpShort
	helpFull
)

// helpBar is the help below the status line: the keys of the pane that has
// the focus (or of the pause), all of them when opened with ?. It draws the
// keyMap through the help bubble (embedded).
type helpBar struct {
	help.Model
	open bool // the full help, opened with ?

	cache [2]string // short and full, as chrome may try both in a frame
	key   [2]helpKey
}

// update handles the help's keys: ? opens or closes it (not while a task
// is being written: ? is text there), esc closes it. It reports whether
// the key was the help's.
func (h *helpBar) update(msg tea.KeyMsg, k keyMap, writing bool) bool {
	switch {
	case key.Matches(msg, k.Dismiss) && h.open: // the help is open over the rest: esc closes it first
		h.open = false
	case key.Matches(msg, k.Help) && !writing:
		h.open = !h.open
	default:
		return false
	}
	return true
}

// view draws the help for hk, all keys when full, cut to width.
func (h *helpBar) view(hk helpKeys, full bool, width int) string {
	key := helpKey{pause: hk.pause, full: full, focus: hk.focus, width: width, slash: hk.slash, follow: hk.follow, search: hk.search}
	slot := 0
	if full {
		slot = 1
	}
	if h.cache[slot] != "" && h.key[slot] == key {
		return h.cache[slot]
	}
	var v string
	if full {
		v = h.fullView(hk.FullHelp(), width)
	} else {
		// Keys are left out from the end, "? all keys" last of all: it
		// says where the rest are.
		h.Width = 0
		b := hk.ShortHelp()
		v = h.ShortHelpView(b)
		for len(b) > 2 && ansi.StringWidth(v) > width && b[len(b)-1].Help().Key == "?" {
			b = append(b[:len(b)-2:len(b)-2], b[len(b)-1])
			v = h.ShortHelpView(b)
		}
		h.Width = width
	}
	// The help bubble overflows when even its "…" does not fit: cut it.
	lines := strings.Split(v, "\n")
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, width, "…")
	}
	h.cache[slot], h.key[slot] = strings.Join(lines, "\n"), key
	return h.cache[slot]
}

// fullView draws the groups of keys side by side as the help bubble does,
// but on as many rows of groups as the width needs: the bubble drops the
// groups that do not fit (at 140 columns, those with the keys that quit).
func (h *helpBar) fullView(groups [][]key.Binding, width int) string {
	h.Width = 0
	sep := h.Styles.FullSeparator.Inline(true).Render(h.FullSeparator)
	var rows, row []string
	used := 0
	for _, g := range groups {
		block := h.FullHelpView([][]key.Binding{g})
		if block == "" {
			continue
		}
		w := lipgloss.Width(block)
		if len(row) > 0 && used+ansi.StringWidth(sep)+w > width {
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
			row, used = nil, 0
		}
		if len(row) > 0 {
			row = append(row, sep)
			used += ansi.StringWidth(sep)
		}
		row = append(row, block)
		used += w
	}
	if len(row) > 0 {
		rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
	}
	h.Width = width
	return strings.Join(rows, "\n\n")
}

// helpOverlay draws all keys over the whole screen, for a terminal too
// small to show them beside the panes.
func (m *Model) helpOverlay() string {
	lines := strings.Split(m.helpViewIn(true, m.width-2), "\n") // inside the box's border
	h := m.height - 3
	if len(lines) > h {
		lines = lines[:h]
	}
	return strings.Join(box("All keys (? or esc closes)", true, m.width, h, lines, false), "\n") + "\n" + m.statusLine()
}

func (m *Model) helpLines(help int) int {
	if help == helpNone {
		return 0
	}
	return strings.Count(m.helpView(help == helpFull), "\n") + 1
}

// helpView draws the help for what has the keys now, all of them when full.
func (m *Model) helpView(full bool) string { return m.helpViewIn(full, m.width) }

// helpViewIn is helpView in width cells.
func (m *Model) helpViewIn(full bool, width int) string {
	_, slash := m.completions()
	hk := helpKeys{k: m.keys, pause: kindOf(m.pause, m.gate.Stepping()), focus: m.focus, narrow: m.width < wideWidth, slash: slash,
		follow: m.following(), search: m.cfg.Search != nil}
	return m.help.view(hk, full, width)
}
