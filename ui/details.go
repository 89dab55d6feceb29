package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// detailView draws a step's details (enter on a Timeline row) over the
// whole terminal.
func (m *Model) detailView() string {
	h := m.height - 3
	lines := m.detail[min(m.detailTop, len(m.detail)):]
	return strings.Join(box("Step details (esc closes, ↑/↓ scroll)", true, m.width, h, lines, false), "\n") + "\n" +
		styleDim.Render(ansi.Truncate(fmt.Sprintf("line %d of %d", m.detailTop+1, len(m.detail)), m.width, "…"))
}
