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
	switch {
	case p.Running:
		t += " [running]"
	case p.Interrupted:
		t += " [interrupted]"
	}
	if p.Err != nil {
		t += " [damaged]"
	}
	if p.Origin == "eval" || p.Origin == "workflow" {
		t += " [" + p.Origin + "]"
	}
	return t
}

func (p pickItem) Description() string {
	model := p.Model
	if model == "" {
		model = "-"
	}
	age := p.Age
	if age == "" {
		age = p.Updated.Local().Format("2006-01-02 15:04")
	}
	d := fmt.Sprintf("%s · %s · updated %s · %s", p.ID, model, age, count(p.Steps, "step"))
	if p.ForkOf != "" { // the parent, first: the title may be cut before it says so
		d = fmt.Sprintf("fork of %s at step %d · %s", p.ForkOf, p.ForkStep, d)
	}
	if p.Elsewhere != "" {
		d += " · in " + flatten(Sanitize(p.Elsewhere))
	}
	return d
}

// FilterValue is what / filters on: the title and the id.
func (p pickItem) FilterValue() string { return p.SessionInfo.Title + " " + p.ID }

// picker is the session picker: the list bubble (embedded), newest first,
// filterable with /. The sessions evals made are left out until tab shows
// them.
type picker struct {
	list.Model
	all   []SessionInfo
	evals bool // the sessions of evals are shown
}

// newPicker makes the picker on the sessions listed, w×h cells.
func newPicker(ls []SessionInfo, w, h int) *picker {
	l := list.New(nil, list.NewDefaultDelegate(), w, h)
	l.SetShowStatusBar(true)
	l.DisableQuitKeybindings()
	p := &picker{Model: l, all: ls}
	p.show()
	return p
}

// show puts the sessions to show in the list, and says in its title how to
// show those it leaves out.
func (p *picker) show() {
	var items []list.Item
	evals := 0
	for _, l := range p.all {
		if l.Origin == "eval" && !p.evals {
			evals++
			continue
		}
		items = append(items, pickItem{l})
	}
	p.SetItems(items)
	p.Title = "Sessions — enter opens, / filters, esc closes"
	switch {
	case evals > 0:
		p.Title += fmt.Sprintf(", tab shows %d eval sessions", evals)
	case p.evals:
		p.Title += ", tab hides eval sessions"
	}
}

// pickResult is what a key in the picker did.
type pickResult int

const (
	picking pickResult = iota
	pickClosed
	pickOpened // the session to open is named
)

// update handles a message for the picker: esc or ctrl+c closes it (esc
// ends or clears a filter first), enter picks the session selected, the
// rest (and the list's own messages) go to the list.
func (p *picker) update(msg tea.Msg, k keyMap) (res pickResult, id string, cmd tea.Cmd) {
	if msg, ok := msg.(tea.KeyMsg); ok {
		switch {
		case key.Matches(msg, k.ClosePicker):
			if key.Matches(msg, k.Dismiss) && p.FilterState() != list.Unfiltered {
				break
			}
			return pickClosed, "", nil
		case msg.Type == tea.KeyTab && p.FilterState() != list.Filtering:
			p.evals = !p.evals
			p.show()
			return picking, "", nil
		case key.Matches(msg, k.Open):
			if p.FilterState() == list.Filtering {
				break
			}
			if it, ok := p.SelectedItem().(pickItem); ok {
				return pickOpened, it.ID, nil
			}
			return picking, "", nil
		}
	}
	p.Model, cmd = p.Model.Update(msg)
	return picking, "", cmd
}

// view draws the picker as exactly h lines of at most w cells: the list
// bubble's own layout overflows a small terminal (its title and help are
// not cut, and it may draw more lines than it was given).
func (p *picker) view(w, h int) string {
	lines := strings.Split(p.Model.View(), "\n")
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
		list[i].ForkOf = flatten(Sanitize(list[i].ForkOf))
	}
	m.picker = newPicker(list, m.width, m.height)
}

// pickerKey closes the picker, or opens the session picked.
func (m *Model) pickerKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	res, id, cmd := m.picker.update(msg, m.keys)
	switch res {
	case pickClosed:
		if m.backend == nil {
			return m, tea.Quit // nothing to go back to
		}
		m.picker = nil
	case pickOpened:
		if m.cfg.Sessions == nil {
			return m, nil
		}
		m.picker = nil
		if m.backend != nil && m.backend.SessionID() == id {
			return m, nil
		}
		m.opening = true
		return m, openSession(m.cfg.Sessions, id)
	}
	return m, cmd
}
