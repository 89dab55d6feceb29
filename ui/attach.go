package ui

import (
	"context"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// "@" mentions: a message that names a workspace file with @path (or a
// folder, @dir) is sent with the file's text (or the folder's listing)
// attached, each in an <attached path="…"> block after the message; the
// chat shows each as a chip, the model reads it whole. The backend reads
// the files (an Attacher), off the Bubble Tea loop, with read_file's
// confinement: a path that leads out of the workspace is refused and the
// message stays in the input.

// Attacher is what a backend that has a workspace offers "@": a file's
// text or a folder's listing, bounded, and the workspace's files for the
// completion list. Both may do I/O: the console calls them from commands.
type Attacher interface {
	Attach(ctx context.Context, path string) (string, error)
	Files(ctx context.Context) []string
}

// attachedMsg is a message whose mentions were read: task is what is sent
// (the text with the attachments), err why it was not.
type attachedMsg struct {
	typed, task string
	err         error
}

// attachOpen begins an attachment block in a task.
const attachOpen = engine.AttachedMarker

// mentions returns the paths a message names with @ at a word's start.
func mentions(text string) []string {
	var out []string
	for _, w := range strings.Fields(text) {
		if p, ok := strings.CutPrefix(w, "@"); ok {
			if p = strings.TrimRight(p, ",.;:!?)\"'"); p != "" && !strings.HasPrefix(p, "@") {
				out = append(out, p)
			}
		}
	}
	return out
}

// attach returns the command that reads the files typed names and makes
// the task with them, or nil when it names none (or nothing can read them).
func (m *Model) attach(typed string) tea.Cmd {
	a, ok := m.backend.(Attacher)
	typed, _ = withoutAttachments(typed)
	paths := mentions(typed)
	if !ok || len(paths) == 0 {
		return nil
	}
	return func() tea.Msg {
		var b strings.Builder
		b.WriteString(typed)
		for _, p := range paths {
			text, err := a.Attach(context.Background(), p)
			if err != nil {
				return attachedMsg{typed: typed, err: fmt.Errorf("@%s: %v", p, err)}
			}
			fmt.Fprintf(&b, "%s%s\">\n%s\n</attached>", attachOpen, strings.ReplaceAll(p, `"`, "'"), strings.TrimRight(text, "\n"))
		}
		return attachedMsg{typed: typed, task: b.String()}
	}
}

// attached sends the task of a message whose mentions were read, or puts
// the message back in the input, saying why it was not sent.
func (m *Model) attached(msg attachedMsg) tea.Cmd {
	m.commanding = max(m.commanding-1, 0)
	if msg.err != nil {
		if m.input.Value() == "" {
			m.setInput(msg.typed)
		}
		m.note = "not sent: " + msg.err.Error()
		return nil
	}
	if m.running || m.backend == nil { // another run began meanwhile: it waits its turn
		m.queue = append([]string{msg.typed}, m.queue...)
		m.growInput()
		return nil
	}
	return m.send(msg.task)
}

// withoutAttachments splits a task into the message as typed and the paths
// of what was attached to it, for the chat's chips.
func withoutAttachments(task string) (string, []string) {
	text, parts := attachments(task)
	var paths []string
	for _, a := range parts {
		paths = append(paths, a.path)
	}
	return text, paths
}

// attachedPart is a file (or folder listing) attached to a message.
type attachedPart struct{ path, body string }

// attachments splits a task into the message as typed and what was
// attached to it, each with its path and text.
func attachments(task string) (string, []attachedPart) {
	text, rest, ok := strings.Cut(task, attachOpen)
	if !ok {
		return task, nil
	}
	var parts []attachedPart
	for ok {
		var a attachedPart
		a.path, rest, _ = strings.Cut(rest, `">`)
		a.body, rest, ok = strings.Cut(rest, attachOpen)
		a.body = strings.TrimSuffix(strings.TrimPrefix(a.body, "\n"), "\n</attached>")
		parts = append(parts, a)
	}
	return text, parts
}
