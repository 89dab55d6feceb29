package ui

import (
	"context"
	"slices"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// CustomCommand is a custom slash command (a Markdown prompt of the
// workspace's or the person's) as the / list shows it.
type CustomCommand struct {
	Name, Args, Help string
}

// CustomCommands is a backend that has custom commands: their list, and
// the run of one, its prompt expanded and its files read. PrepareCommand
// may do I/O: the console calls it from a command, off the loop; the run
// it returns starts when the loop is free, and note is said first.
type CustomCommands interface {
	CustomCommands() []CustomCommand
	PrepareCommand(name, arg string) (run func(context.Context) <-chan engine.Event, note string, err error)
}

// customs are the backend's custom commands as the list shows them, after
// the built-in ones (a custom command never takes a built-in's name).
func (m *Model) customs() []command {
	cc, ok := m.backend.(CustomCommands)
	if !ok {
		return nil
	}
	var out []command
	for _, c := range cc.CustomCommands() {
		out = append(out, command{name: flatten(Sanitize(c.Name)), args: flatten(Sanitize(c.Args)), help: flatten(Sanitize(c.Help)), custom: true})
	}
	return out
}

// allCommands are the built-in commands, then the custom ones.
func (m *Model) allCommands() []command {
	return slices.Concat(commands, m.customs())
}

// customCommand runs the custom command name with arg, when the backend
// has one of that name; ok is false when it has none.
func (m *Model) customCommand(name, arg string) (tea.Cmd, bool) {
	cc, ok := m.backend.(CustomCommands)
	if !ok || !slices.ContainsFunc(cc.CustomCommands(), func(c CustomCommand) bool { return c.Name == name }) {
		return nil, false
	}
	if why := m.busy(); why != "" {
		m.notify("/" + name + ": " + why)
		return nil, true
	}
	return m.runCommand(name, func() commandDoneMsg {
		run, note, err := cc.PrepareCommand(name, arg)
		return commandDoneMsg{run: run, note: note, err: err}
	}), true
}
