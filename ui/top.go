package ui

import (
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// The fleet screen (agentty top): the runs going on and the requests
// waiting, drawn again every few seconds; Enter watches the run under the
// cursor (its console), c cancels it, q quits.

// TopRow is one line of the fleet screen: a run or a waiting request.
type TopRow struct {
	Session string
	Line    string // the row as drawn, columns aligned by the caller
	Queued  bool
}

// TopView is what the screen shows: a title, the column heads, the rows,
// and lines below them (the pools, the workers).
type TopView struct {
	Title, Head string
	Rows        []TopRow
	Foot        []string
	Err         string
}

// TopSource gives the fleet screen what to show and does what is asked.
// Both are called off the Bubble Tea loop (in commands).
type TopSource interface {
	Snapshot() TopView
	Cancel(session string) (string, error)
}

// Top is the fleet screen's model. Watch, once it has quit, is the
// session the person chose to watch ("" for none).
type Top struct {
	src           TopSource
	every         time.Duration
	view          TopView
	cursor        int
	note          string
	width, height int
	Watch         string
	keys          keyMap
}

// NewTop returns the fleet screen on src, drawn again every every.
func NewTop(src TopSource, every time.Duration) *Top {
	return &Top{src: src, every: every, keys: newKeyMap()}
}

type topSnapMsg TopView
type topNoteMsg string

func (t *Top) fetch() tea.Cmd {
	return func() tea.Msg { return topSnapMsg(t.src.Snapshot()) }
}

// Init implements tea.Model.
func (t *Top) Init() tea.Cmd { return t.fetch() }

// Update implements tea.Model.
func (t *Top) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		t.width, t.height = msg.Width, msg.Height
	case topSnapMsg:
		t.view = TopView(msg)
		t.cursor = min(t.cursor, max(len(t.view.Rows)-1, 0))
		return t, tea.Tick(t.every, func(time.Time) tea.Msg { return t.fetch()() })
	case topNoteMsg:
		t.note = string(msg)
		return t, t.fetch()
	case tea.KeyMsg:
		return t.key(msg)
	}
	return t, nil
}

func (t *Top) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch {
	case msg.String() == "q" || key.Matches(msg, t.keys.Cancel) || key.Matches(msg, t.keys.Quit):
		return t, tea.Quit
	case key.Matches(msg, t.keys.Up):
		t.cursor = max(t.cursor-1, 0)
	case key.Matches(msg, t.keys.Down):
		t.cursor = min(t.cursor+1, max(len(t.view.Rows)-1, 0))
	case msg.Type == tea.KeyEnter && len(t.view.Rows) > 0:
		t.Watch = t.view.Rows[t.cursor].Session
		return t, tea.Quit
	case msg.String() == "c" && len(t.view.Rows) > 0:
		s := t.view.Rows[t.cursor].Session
		t.note = "cancelling " + s + "…"
		return t, func() tea.Msg {
			said, err := t.src.Cancel(s)
			if err != nil {
				return topNoteMsg("cancel: " + err.Error())
			}
			return topNoteMsg(said)
		}
	}
	return t, nil
}

// View implements tea.Model.
func (t *Top) View() string {
	w := max(t.width, 20)
	var b []string
	b = append(b, styleTitle.Render(fit(Sanitize(t.view.Title), w)))
	if t.view.Err != "" {
		b = append(b, styleErr.Render(fit(Sanitize(t.view.Err), w)))
	}
	b = append(b, "", styleDim.Render(fit(Sanitize(t.view.Head), w)))
	if len(t.view.Rows) == 0 {
		b = append(b, styleDim.Render("nothing runs or waits"))
	}
	for i, r := range t.view.Rows {
		l := fit(Sanitize(r.Line), w)
		if i == t.cursor {
			l = styleCursor.Render(l)
		}
		b = append(b, l)
	}
	b = append(b, "")
	for _, f := range t.view.Foot {
		b = append(b, fit(Sanitize(f), w))
	}
	keys := "↑/↓ choose · enter: watch it (its console answers its pauses) · c: cancel it · q: quit"
	if t.note != "" {
		keys = flatten(Sanitize(t.note)) + " · " + keys
	}
	if t.height > 2 && len(b) > t.height-1 {
		b = b[:t.height-1]
	}
	return strings.Join(b, "\n") + "\n" + styleDim.Render(ansi.Truncate(keys, w, "…"))
}

// RunTop runs the fleet screen until the person quits or picks a run.
func RunTop(t *Top) error {
	_, err := tea.NewProgram(t, tea.WithAltScreen()).Run()
	return err
}
