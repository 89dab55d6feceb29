package ui

import "github.com/charmbracelet/bubbles/key"

// keyMap holds every key of the console; the help bubble shows them.
type keyMap struct {
	Send, Newline, History, Focus, Scroll, Expand, Detail          key.Binding
	StepMode, Sessions, Continue, Cancel, Quit, Help, Back         key.Binding
	Step, Run, Edit, Skip, Deny, Abort, MemAdd, MemEdit, MemDelete key.Binding
}

func newKeyMap() keyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return keyMap{
		Send:      b([]string{"enter"}, "enter", "send"),
		Newline:   b([]string{"alt+enter", "ctrl+j"}, "alt+enter", "newline"),
		History:   b([]string{"up", "down"}, "↑/↓", "input history"),
		Focus:     b([]string{"tab", "shift+tab"}, "tab", "next pane"),
		Scroll:    b([]string{"pgup", "pgdown"}, "pgup/pgdn", "scroll chat"),
		Expand:    b([]string{"ctrl+x"}, "ctrl+x", "expand tool calls"),
		Detail:    b([]string{"enter"}, "enter", "step details (timeline)"),
		StepMode:  b([]string{"ctrl+t"}, "ctrl+t", "step mode"),
		Sessions:  b([]string{"ctrl+o"}, "ctrl+o", "sessions"),
		Continue:  b([]string{"ctrl+r"}, "ctrl+r", "continue interrupted run"),
		Cancel:    b([]string{"ctrl+c"}, "ctrl+c", "cancel run / quit"),
		Quit:      b([]string{"ctrl+d"}, "ctrl+d", "quit"),
		Help:      b([]string{"?"}, "?", "all keys"),
		Back:      b([]string{"esc"}, "esc", "back to input"),
		Step:      b([]string{"enter"}, "enter", "step"),
		Run:       b([]string{"c"}, "c", "continue"),
		Edit:      b([]string{"e"}, "e", "edit args"),
		Skip:      b([]string{"s"}, "s", "skip call"),
		Deny:      b([]string{"n"}, "n", "deny"),
		Abort:     b([]string{"esc"}, "esc", "abort run"),
		MemAdd:    b([]string{"a"}, "a", "add fact"),
		MemEdit:   b([]string{"e"}, "e", "edit fact"),
		MemDelete: b([]string{"d"}, "d", "delete fact"),
	}
}

// helpKeys adapts the key map to the help bubble for the current context.
type helpKeys struct {
	k      keyMap
	paused bool
	focus  focus
	narrow bool // fewer, longer columns
}

func (h helpKeys) ShortHelp() []key.Binding {
	if h.paused {
		return []key.Binding{h.k.Step, h.k.Run, h.k.Edit, h.k.Skip, h.k.Abort, h.k.Help}
	}
	switch h.focus {
	case focusTimeline:
		return []key.Binding{h.k.Detail, h.k.Focus, h.k.Back, h.k.StepMode, h.k.Help}
	case focusMemory:
		return []key.Binding{h.k.MemAdd, h.k.MemEdit, h.k.MemDelete, h.k.Focus, h.k.Back, h.k.Help}
	}
	return []key.Binding{h.k.Send, h.k.Newline, h.k.Focus, h.k.StepMode, h.k.Cancel, h.k.Help}
}

func (h helpKeys) FullHelp() [][]key.Binding {
	cols := [][]key.Binding{
		{h.k.Send, h.k.Newline, h.k.History, h.k.Focus, h.k.Back},
		{h.k.Scroll, h.k.Expand, h.k.Detail, h.k.Sessions, h.k.Continue},
		{h.k.StepMode, h.k.Step, h.k.Run, h.k.Edit, h.k.Skip, h.k.Deny, h.k.Abort},
		{h.k.MemAdd, h.k.MemEdit, h.k.MemDelete, h.k.Cancel, h.k.Quit, h.k.Help},
	}
	if h.narrow {
		return [][]key.Binding{append(cols[0], cols[1]...), append(cols[2], cols[3]...)}
	}
	return cols
}
