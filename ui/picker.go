package ui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/list"

	"github.com/agentty/agentty/sessions"
)

// pickItem is a session in the picker.
type pickItem struct{ sessions.Listing }

func (p pickItem) Title() string {
	t := p.Meta.Title
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
	return fmt.Sprintf("%s · %s · updated %s · %d steps", p.ID, model, p.Updated.Local().Format("2006-01-02 15:04"), p.LastStep)
}

func (p pickItem) FilterValue() string { return p.Meta.Title + " " + p.ID + " " + p.Model }

// newPicker makes the session picker: newest first, filterable with /.
func newPicker(ls []sessions.Listing, w, h int) *list.Model {
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
