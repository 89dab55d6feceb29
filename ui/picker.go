package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// pickItem is a session in the picker.
type pickItem struct{ SessionInfo }

func (p pickItem) Title() string {
	t := p.SessionInfo.Title
	if t == "" {
		t = "(untitled)"
	}
	if p.Interrupted {
		t += " [interrupted]"
	}
	if p.Err != nil {
		t += " [damaged]"
	}
	return t
}

func (p pickItem) Description() string {
	model := p.Model
	if model == "" {
		model = "-"
	}
	return fmt.Sprintf("%s · %s · updated %s · %s", p.ID, model, p.Updated.Local().Format("2006-01-02 15:04"), count(p.Steps, "step"))
}

// FilterValue is what / filters on: the title and the id.
func (p pickItem) FilterValue() string { return p.SessionInfo.Title + " " + p.ID }

// newPicker makes the session picker: newest first, filterable with /.
func newPicker(ls []SessionInfo, w, h int) *list.Model {
	items := make([]list.Item, len(ls))
	for i, l := range ls {
		items[i] = pickItem{l}
	}
	l := list.New(items, list.NewDefaultDelegate(), w, h)
	l.Title = "Sessions — enter opens, / filters, esc closes"
	l.SetShowStatusBar(true)
	l.DisableQuitKeybindings()
	return &l
}

// pickerView draws the picker as exactly h lines of at most w cells: the
// list bubble's own layout overflows a small terminal (its title and help
// are not cut, and it may draw more lines than it was given).
func pickerView(l *list.Model, w, h int) string {
	lines := strings.Split(l.View(), "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, line := range lines {
		if ansi.StringWidth(line) > w {
			lines[i] = ansi.Truncate(line, w, "…")
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// openPicker shows the session picker.
func (m *Model) openPicker(list []SessionInfo, err error) {
	if err != nil {
		m.note = err.Error()
		return
	}
	for i := range list { // titles and models come from the sessions' files
		list[i].Title, list[i].Model = flatten(Sanitize(list[i].Title)), flatten(Sanitize(list[i].Model))
	}
	m.picker = newPicker(list, m.width, m.height)
}

func (m *Model) pickerKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch {
	case key.Matches(msg, m.keys.ClosePicker):
		if key.Matches(msg, m.keys.Dismiss) && m.picker.FilterState() != list.Unfiltered {
			break // esc ends or clears the filter first
		}
		if m.backend == nil {
			return m, tea.Quit // nothing to go back to
		}
		m.picker = nil
		return m, nil
	case key.Matches(msg, m.keys.Open):
		if m.picker.FilterState() == list.Filtering {
			break
		}
		it, ok := m.picker.SelectedItem().(pickItem)
		if !ok || m.cfg.Sessions == nil {
			return m, nil
		}
		m.picker = nil
		if m.backend != nil && m.backend.SessionID() == it.ID {
			return m, nil
		}
		m.opening = true
		return m, openSession(m.cfg.Sessions, it.ID)
	}
	var cmd tea.Cmd
	*m.picker, cmd = m.picker.Update(msg)
	return m, cmd
}
