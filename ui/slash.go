package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// Commander is what a backend that may change its session offers the
// slash commands. A backend without it (a read-only session) has none of
// them: the console says so. Compact returns at once; every other method
// may do I/O and is called from a command, off the Bubble Tea loop.
type Commander interface {
	// Compact compacts the session's history now, keeping focus in the
	// summary. Its events (retry, notice, context_compacted) come on the
	// channel, which is closed at the end; when nothing can be compacted
	// or the call fails, a notice says why.
	Compact(ctx context.Context, focus string) <-chan engine.Event
	// SetModel makes name the model of the session's next runs and
	// returns the journaled model_changed. An unknown or unusable name is
	// an error, and nothing changes.
	SetModel(name string) (engine.Event, error)
	// SetAgent makes name the agent the session's next runs run as and
	// returns the journaled handoff. An unknown name is an error naming
	// the agents there are.
	SetAgent(name string) (engine.Event, error)
	// Fork forks the session at step and opens the fork, as Sessions.Open
	// opens a session.
	Fork(step int) (Backend, []engine.Event, error)
	// Clear opens a new, empty session with the same settings.
	Clear() (Backend, []engine.Event, error)
	// Export writes the session as format ("md" or "json") to file (""
	// for a file named after the session in the current folder) and
	// returns the path it wrote.
	Export(format, file string) (string, error)
	// Trust trusts the workspace's config, as `agentty trust` does, and
	// says what it did.
	Trust() (string, error)
	// ModelName names the model the session's next runs use.
	ModelName() string
}

// command is a slash command: its name, its arguments as the list shows
// them, and what it does.
type command struct {
	name, args, help string
	needsArg         bool // it does nothing useful without its argument
	custom           bool // a custom command (slash_custom.go)
}

// commands are the slash commands, in the order the list shows them.
var commands = []command{
	{name: "compact", args: "[focus]", help: "summarise the oldest history now, keeping focus"},
	{name: "clear", help: "a new session with the same settings"},
	{name: "model", args: "NAME", help: "the model of the next runs", needsArg: true},
	{name: "agent", args: "NAME", help: "the agent of the next runs", needsArg: true},
	{name: "fork", args: "[STEP]", help: "a new session up to STEP (the last)"},
	{name: "diff", args: "[STEP]", help: "what the session (or a step) changed in the files"},
	{name: "rewind", args: "STEP|undo", help: "files and/or conversation as before STEP, or undo"},
	{name: "workflow", args: "[NAME K=V…]", help: "carry out a workflow (none: list them)"},
	{name: "export", args: "[md|json] [FILE]", help: "write the session to a file"},
	{name: "copy", args: "[N|code]", help: "copy the last answer (N back, or its last code block)"},
	{name: "search", args: "[QUERY]", help: "search the sessions and files (ctrl+f)"},
	{name: "memory", help: "the Memory pane"},
	{name: "mouse", help: "release the mouse to select text, or take it back (ctrl+g)"},
	{name: "zoom", help: "the focused pane at full width, or back (ctrl+z)"},
	{name: "skills", help: "the Agent Skills the model may read"},
	{name: "trust", help: "trust this workspace's config"},
	{name: "break", args: "[COND|clear|list]", help: "pause at COND: tool=, agent=, step=, error, text=, tokens>"},
	{name: "permissions", args: "[revoke N]", help: "what is allowed for this session"},
	{name: "help", help: "all keys"},
	{name: "exit", help: "quit (as ctrl+d)"},
	{name: "quit", help: "quit (as ctrl+d)"},
}

// SkillLister is a backend that can say which Agent Skills the model has
// (/skills).
type SkillLister interface {
	Skills() string
}

// BuiltinCommands are the names of the console's own slash commands: a
// custom command of one of these names is left out (the built-in wins).
func BuiltinCommands() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return names
}

// commandNames lists the commands, for the line an unknown one gets.
func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = "/" + c.name
	}
	return strings.Join(names, " ")
}

// slashCommand runs the command line typed (it starts with "/"). Whatever
// it does or refuses, the line is done with: nothing is sent to the model.
func (m *Model) slashCommand(line string) tea.Cmd {
	name, arg, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	arg = strings.TrimSpace(arg)
	var cmd *command
	for i := range commands {
		if commands[i].name == name {
			cmd = &commands[i]
		}
	}
	if cmd == nil {
		if run, ok := m.customCommand(name, arg); ok {
			return run
		}
		names := commandNames()
		for _, c := range m.customs() {
			names += " /" + c.name
		}
		m.notify(fmt.Sprintf("Unknown command /%s: the commands are %s (// sends a message that starts with /; command files are read when the console starts).", name, names))
		return nil
	}
	if cmd, ok := m.instantCommand(name, arg); ok { // the ones that change nothing run at any time
		return cmd
	}
	if why := m.busy(); why != "" {
		m.notify("/" + name + ": " + why)
		return nil
	}
	if name == "diff" || name == "rewind" {
		r, ok := m.backend.(Rewinder)
		switch {
		case !ok:
			m.notify("/" + name + " is not here: this session keeps no checkpoints of its files.")
			return nil
		case name == "diff":
			return m.diffCommand(r, arg)
		}
		return m.rewindCommand(r, arg)
	}
	c, ok := m.backend.(Commander)
	if !ok {
		m.notify("/" + name + " is not here: this session is read-only.")
		return nil
	}
	switch name {
	case "compact":
		return m.startCompact(c, arg)
	case "workflow":
		return m.workflowCommand(arg)
	case "clear":
		last := m.backend.SessionID()
		return m.runCommand(name, func() commandDoneMsg {
			b, evs, err := c.Clear()
			return commandDoneMsg{open: b, events: evs, err: err,
				note: "A new session, with the same settings (ctrl+o opens the last one again: " + last + ")."}
		})
	case "model", "agent":
		return m.setModelOrAgent(c, name, arg)
	case "fork":
		return m.forkCommand(c, arg)
	case "export":
		return m.exportCommand(c, arg)
	case "trust":
		return m.runCommand(name, func() commandDoneMsg {
			said, err := c.Trust()
			return commandDoneMsg{err: err, note: strings.TrimSpace(said) + "\nIt takes effect the next time agentty starts here."}
		})
	}
	return nil
}

// setModelOrAgent runs /model NAME or /agent NAME.
func (m *Model) setModelOrAgent(c Commander, name, arg string) tea.Cmd {
	if strings.ContainsAny(arg, " \t\n") {
		m.notify(fmt.Sprintf("/%s takes one name, not %q.", name, arg))
		return nil
	}
	if arg == "" && name == "model" {
		m.notify("/model NAME sets the model of the next runs (now " + m.model + ").")
		return nil
	}
	return m.runCommand(name, func() commandDoneMsg {
		var ev engine.Event
		var err error
		if name == "model" {
			ev, err = c.SetModel(arg)
		} else {
			ev, err = c.SetAgent(arg)
		}
		return commandDoneMsg{ev: &ev, err: err}
	})
}

// forkCommand runs /fork [STEP].
func (m *Model) forkCommand(c Commander, arg string) tea.Cmd {
	step := m.sess.Steps
	if arg != "" {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 {
			m.notify(fmt.Sprintf("/fork STEP takes a step number (0 to %d), not %q.", m.sess.Steps, arg))
			return nil
		}
		step = n
	}
	from := m.backend.SessionID()
	return m.runCommand("fork", func() commandDoneMsg {
		b, evs, err := c.Fork(step)
		return commandDoneMsg{open: b, events: evs, err: err, note: fmt.Sprintf("A fork of %s at step %d.", from, step)}
	})
}

// exportCommand runs /export [md|json] [FILE].
func (m *Model) exportCommand(c Commander, arg string) tea.Cmd {
	format, file := "", arg
	f, rest, two := strings.Cut(arg, " ")
	switch {
	case f == "md" || f == "markdown" || f == "json":
		format, file = f, strings.TrimSpace(rest)
	case two || f != "" && !strings.ContainsAny(f, "./"):
		// A word with no extension is a format it does not know.
		m.notify(fmt.Sprintf("/export: unknown format %q: the formats are md and json (/export [md|json] [FILE]; a file name has its extension)", f))
		return nil
	}
	if format == "" {
		format = "md"
		if strings.HasSuffix(strings.ToLower(file), ".json") {
			format = "json"
		}
	}
	if format == "markdown" {
		format = "md"
	}
	return m.runCommand("export", func() commandDoneMsg {
		path, err := c.Export(format, file)
		return commandDoneMsg{err: err, note: "Exported the session to " + path + "."}
	})
}

// busy says why a command that changes the session cannot run now ("":
// it can).
func (m *Model) busy() string {
	switch {
	case m.running:
		return "a run is going: wait for it, or ctrl+c to cancel it"
	case m.opening:
		return "a session is being opened"
	case m.saving > 0:
		return "a memory edit is being saved"
	case m.commanding > 0:
		return "another command is being carried out"
	case m.backend == nil:
		return "no session is open: ctrl+o to pick one"
	}
	return ""
}

// runCommand runs f, a command's I/O, off the loop; its commandDoneMsg
// comes back to Update.
func (m *Model) runCommand(name string, f func() commandDoneMsg) tea.Cmd {
	m.commanding++
	on := m.backend
	return doCommand(func() commandDoneMsg {
		d := f()
		d.name, d.on = name, on
		return d
	})
}

// commandDone applies what a command did: the event it journaled, the
// session it opened (which the console switches to, as the picker's), and
// what it says.
func (m *Model) commandDone(msg commandDoneMsg) tea.Cmd {
	m.commanding--
	if msg.err != nil {
		if msg.open != nil {
			msg.open.Close()
		}
		m.notify("/" + msg.name + ": " + msg.err.Error())
		return nil
	}
	var cmd tea.Cmd
	switch {
	case msg.open != nil && (m.running || msg.on != m.backend):
		m.notify("/" + msg.name + ": the session changed meanwhile; the new one is not opened")
		return m.retire(msg.open)
	case msg.open != nil:
		if m.backend != nil {
			cmd = m.retire(m.backend)
		}
		m.setBackend(msg.open, msg.events)
	case msg.ev != nil && msg.on == m.backend:
		m.applyEvent(*msg.ev)
	case msg.show != nil && msg.on == m.backend:
		m.detail, m.rewind, m.rewindAsk = msg.show, msg.plan, nil
	case msg.run != nil:
		if why := m.busy(); why != "" || msg.on != m.backend {
			if why == "" {
				why = "the session changed meanwhile"
			}
			m.notify("/" + msg.name + ": " + why + "; nothing was run")
			return nil
		}
		if msg.note != "" {
			m.notify(msg.note)
		}
		m.chat.follow = true
		return m.startRun(msg.run)
	}
	if msg.note != "" {
		m.notify(msg.note)
	}
	return cmd
}

// notify shows one line from the console in the Chat.
func (m *Model) notify(text string) {
	m.chat.add(&chatItem{kind: itemNote, text: Sanitize(text)})
	m.chat.follow = true
}

// startCompact compacts the session now: it goes as a run does (ctrl+c
// cancels it), its events shown as they come.
func (m *Model) startCompact(c Commander, focus string) tea.Cmd {
	cmd := m.startRun(func(ctx context.Context) <-chan engine.Event { return c.Compact(ctx, focus) })
	m.state = "compacting"
	return cmd
}

// forkHere forks the session at the step of the Timeline's row under the
// cursor (f), as /fork STEP does, and opens the fork.
func (m *Model) forkHere() tea.Cmd {
	r, ok := m.tl.selected()
	if !ok {
		m.note = "no step to fork at yet"
		return nil
	}
	return m.slashCommand(fmt.Sprintf("/fork %d", r.step))
}

// instantCommand runs the slash commands that change nothing, at any time;
// ok is false for the others.
func (m *Model) instantCommand(name, arg string) (tea.Cmd, bool) {
	switch name {
	case "exit", "quit":
		if m.running {
			m.notify("/" + name + ": a run is going on: ctrl+c cancels it, then /" + name + " quits.")
			return nil, true
		}
		return tea.Quit, true
	case "memory":
		m.setFocus(focusMemory)
		return nil, true
	case "zoom":
		m.toggleZoom()
		return nil, true
	case "help":
		m.help.open = true
		m.layout()
		return nil, true
	case "search":
		return m.openSearch(arg), true
	case "copy":
		return m.copyCommand(arg), true
	case "mouse":
		return m.toggleMouse(), true
	case "break":
		m.breakCommand(arg)
		return nil, true
	case "permissions":
		m.permissionsCommand(arg)
		return nil, true
	case "skills":
		if s, ok := m.backend.(SkillLister); ok {
			m.notify(s.Skills())
		} else {
			m.notify("/skills is not here: this session is read-only.")
		}
		return nil, true
	}
	return nil, false
}
