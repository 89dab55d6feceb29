package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// The help below the status line.
const (
	helpNone = iota
	helpShort
	helpFull
)

func (m *Model) helpLines(help int) int {
	if help == helpNone {
		return 0
	}
	return strings.Count(m.helpView(help == helpFull), "\n") + 1
}

// helpView draws the help, all keys when full.
func (m *Model) helpView(full bool) string {
	hk := helpKeys{k: m.keys, pause: kindOf(m.pause, m.gate.Stepping()), focus: m.focus, narrow: m.width < wideWidth}
	key := helpKey{pause: hk.pause, full: full, focus: hk.focus, width: m.width}
	slot := 0
	if full {
		slot = 1
	}
	if m.helpCache[slot] != "" && m.helpKey[slot] == key {
		return m.helpCache[slot]
	}
	var v string
	if full {
		v = m.help.FullHelpView(hk.FullHelp())
	} else {
		v = m.help.ShortHelpView(hk.ShortHelp())
	}
	// The help bubble overflows when even its "…" does not fit: cut it.
	lines := strings.Split(v, "\n")
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "…")
	}
	m.helpCache[slot], m.helpKey[slot] = strings.Join(lines, "\n"), key
	return m.helpCache[slot]
}
