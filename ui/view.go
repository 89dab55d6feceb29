package ui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Layout: the panes side by side on a wide terminal, one at a time (with a
// tab bar) on a narrow one or zoomed; the input box, the status line and
// the help below them.
const wideWidth = 120

// wide reports whether the panes are side by side.
func (m *Model) wide() bool { return m.width >= wideWidth && !m.zoomed }

// toggleZoom gives the pane that has the focus (the Chat when the input
// has it) the whole width, as a narrow terminal shows it, or puts the
// panes side by side again. Zoomed, tab goes from pane to pane, each with
// the whole width; a resize keeps the zoom.
func (m *Model) toggleZoom() {
	wasWide := m.wide()
	m.zoomed = !m.zoomed
	switch {
	case !m.zoomed:
		m.note = "zoom off: the panes side by side"
		if m.width < wideWidth {
			m.note = "zoom off (the terminal is too narrow for the panes side by side)"
		}
	case m.focus != focusInput:
		m.shown = m.focus
	case wasWide:
		m.shown = focusChat
	}
	if m.zoomed {
		m.note = "zoom: the " + paneNames[m.shown] + " has the whole width (ctrl+z or /zoom: side by side)"
	}
	m.layout()
}

func (m *Model) widths() (chatW, tlW, memW int) {
	if !m.wide() {
		return m.width, m.width, m.width
	}
	chatW = m.width * 48 / 100
	tlW = m.width * 30 / 100
	return chatW, tlW, m.width - chatW - tlW
}

// paneHeight is the height of the panes' content (inside their borders).
func (m *Model) paneHeight() int {
	_, _, h := m.chrome()
	return h
}

// chrome decides what fits in the terminal's height around the panes: the
// help (full when asked for, else short, or none on a tiny terminal) and a
// narrow terminal's tab bar, which give way, in that order, until the panes
// have 3 lines; and it returns the panes' height inside their borders (1 at
// the least, as on a 20×8 terminal).
func (m *Model) chrome() (help int, tabs bool, paneH int) {
	help, tabs = helpShort, !m.wide()
	if m.help.open {
		help = helpFull
	}
	for {
		h := m.height - 2 /* pane borders */ - m.inputHeight() - 1 /* status */ - m.helpLines(help)
		if tabs {
			h--
		}
		switch {
		case h >= 3 || help == helpNone && !tabs:
			return help, tabs, max(h, 1)
		case help == helpFull:
			help = helpShort
		case help == helpShort:
			help = helpNone
		default:
			tabs = false
		}
	}
}

func (m *Model) layout() {
	m.help.Width = m.width // before paneHeight, which draws the help
	chatW, tlW, memW := m.widths()
	h := m.paneHeight()
	m.chat.setSize(chatW-2, h)
	m.tl.setSize(tlW-2, h)
	m.mem.setSize(memW-2, h)
	m.input.SetWidth(max(m.width-4, 10))
}

// View draws the console. It only reads the model.
func (m *Model) View() string {
	switch {
	case m.picker != nil:
		return m.picker.view(m.width, m.height)
	case m.argsEditor != nil:
		return m.editorView()
	case m.inspector != nil && m.pause != nil && m.pause.pending.Request != nil:
		return m.inspectorView()
	case m.detail != nil:
		return m.detail.view(m.width, m.height)
	case m.search != nil:
		return m.search.view(m.width, m.height)
	}
	help, tabs, h := m.chrome()
	if m.help.open && help != helpFull {
		return m.helpOverlay()
	}
	var b strings.Builder
	b.Grow(m.width * m.height * 3) // box-drawing characters take three bytes
	chatW, tlW, memW := m.widths()
	// The list of slash commands opens over the panes' last lines, just
	// above the input, while a command's name is typed.
	list := m.slashView(m.width, min(len(commands)+2, h-1))
	if list == nil {
		list = m.mentionView(m.width, min(10, h-1))
	}
	h -= len(list)
	if m.wide() {
		m.writePanes(&b, h,
			pane{"Chat", m.focus == focusChat, chatW, m.chat.view(m.focus == focusChat)},
			pane{"Timeline", m.focus == focusTimeline, tlW, m.tl.view(m.focus == focusTimeline)},
			pane{"Memory", m.focus == focusMemory, memW, m.mem.view(m.focus == focusMemory)})
	} else {
		if tabs {
			b.WriteString(m.tabs())
			b.WriteByte('\n')
		}
		var lines []string
		switch m.shown {
		case focusTimeline:
			lines = m.tl.view(m.focus == focusTimeline)
		case focusMemory:
			lines = m.mem.view(m.focus == focusMemory)
		default:
			lines = m.chat.view(m.focus == focusChat)
		}
		m.writePanes(&b, h, pane{paneNames[m.shown], m.focus == m.shown, m.width, lines})
	}
	for _, l := range list {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	for _, l := range m.inputBox() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(m.statusLine())
	if help != helpNone {
		b.WriteByte('\n')
		b.WriteString(m.helpView(help == helpFull))
	}
	return b.String()
}

func (m *Model) tabs() string {
	var parts []string
	for _, f := range []focus{focusChat, focusTimeline, focusMemory} {
		name := paneNames[f]
		if f == m.shown {
			parts = append(parts, styleFocus.Render("["+name+"]"))
		} else {
			parts = append(parts, " "+name+" ")
		}
	}
	return ansi.Truncate(strings.Join(parts, " ")+styleDim.Render("   tab switches"), m.width, "…")
}

// box draws lines inside a border titled title: exactly h+2 lines, each
// exactly w cells wide. Lines are cut or padded to fit unless fitted says
// they already are.
func box(title string, focused bool, w, h int, lines []string, fitted bool) []string {
	inner := max(w-2, 1)
	t := " " + title + " "
	if focused {
		t = styleFocus.Render(t)
	} else {
		t = styleTitle.Render(t)
	}
	top := "┌─" + ansi.Truncate(t, inner-1, "…")
	top += strings.Repeat("─", max(w-1-ansi.StringWidth(top), 0)) + "┐"
	out := make([]string, 0, h+2)
	out = append(out, top)
	blank := strings.Repeat(" ", inner)
	for i := range h {
		l := blank
		if i < len(lines) && lines[i] != "" {
			l = lines[i]
			if !fitted {
				l = fit(l, inner)
			}
		}
		out = append(out, "│"+l+"│")
	}
	return append(out, "└"+strings.Repeat("─", inner)+"┘")
}

// pane is a bordered pane of fitted lines.
type pane struct {
	title   string
	focused bool
	width   int
	lines   []string
}

// writePanes writes panes side by side, h lines high inside their borders,
// straight into b: a frame builds no string per pane line.
func (m *Model) writePanes(b *strings.Builder, h int, panes ...pane) {
	for _, p := range panes {
		b.WriteString(m.border(p.title, p.focused, p.width))
	}
	b.WriteByte('\n')
	for i := range h {
		for _, p := range panes {
			b.WriteString("│")
			if i < len(p.lines) && p.lines[i] != "" {
				b.WriteString(p.lines[i])
			} else {
				b.WriteString(m.blank(p.width - 2))
			}
			b.WriteString("│")
		}
		b.WriteByte('\n')
	}
	for _, p := range panes {
		b.WriteString("└")
		b.WriteString(m.rule(p.width - 2))
		b.WriteString("┘")
	}
	b.WriteByte('\n')
}

// Keys of View's caches: plain structs, so a frame formats no key.
type (
	borderKey struct {
		title   string
		focused bool
		width   int
	}
	helpKey struct {
		pause pauseKind
		full  bool
		focus focus
		width int
		slash bool

		follow, search bool
	}
)

// border returns a pane's top border, made once per title, focus and width.
func (m *Model) border(title string, focused bool, w int) string {
	key := borderKey{title, focused, w}
	if s, ok := m.borders[key]; ok {
		return s
	}
	s := box(title, focused, w, 0, nil, true)[0]
	if m.borders == nil {
		m.borders = map[borderKey]string{}
	}
	m.borders[key] = s
	return s
}

func (m *Model) blank(w int) string {
	if len(m.blanks) != w {
		m.blanks = strings.Repeat(" ", max(w, 0))
	}
	return m.blanks
}

func (m *Model) rule(w int) string {
	return strings.Repeat("─", max(w, 0))
}

// fit cuts or pads l to exactly w cells, on a cell boundary. l is one line
// of sanitized text: a line break in it, which would add a row to the
// frame, becomes a space.
func fit(l string, w int) string {
	if strings.IndexByte(l, '\n') >= 0 {
		l = strings.ReplaceAll(l, "\n", " ")
	}
	return padRight(ansi.Truncate(baseMark(l), w, "…"), w)
}

// baseMark puts a line that begins with a mark of no width of its own (a
// combining accent, a variation selector, a joiner) on the dotted circle
// that such a mark is shown on alone: drawn after a border, it would join
// the border into one wider character and tear the frame.
func baseMark(l string) string {
	i := 0
	for i+1 < len(l) && l[i] == '\x1b' && l[i+1] == '[' { // our styling: CSI … final byte
		j := i + 2
		for j < len(l) && (l[j] < 0x40 || l[j] > 0x7e) {
			j++
		}
		i = j + 1
	}
	if i >= len(l) || l[i] < utf8.RuneSelf {
		return l
	}
	r, n := utf8.DecodeRuneInString(l[i:])
	if ansi.StringWidth(l[i:i+n]) != 0 || r == utf8.RuneError {
		return l
	}
	return l[:i] + "◌" + l[i:]
}
