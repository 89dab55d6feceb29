package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
)

// attachBackend is a streamBackend with a workspace of one file.
type attachBackend struct {
	*streamBackend
	tasks chan string
}

func (b attachBackend) Start(ctx context.Context, task string) <-chan engine.Event {
	b.tasks <- task
	return b.streamBackend.Start(ctx, task)
}

func (attachBackend) Attach(_ context.Context, p string) (string, error) {
	if p == "notes.md" {
		return "1\t# Notes", nil
	}
	return "", errors.New("refused: " + p + " leads outside the workspace")
}

func (attachBackend) Files(context.Context) []string { return []string{"notes.md"} }

// TestAtAttachesAFile: @notes.md sends the message with the file attached
// (the chat shows a chip, not the text); a path the backend refuses keeps
// the message in the input and says why.
func TestAtAttachesAFile(t *testing.T) {
	b := attachBackend{newStreamBackend(), make(chan string, 1)}
	m := New(Config{Style: "notty", Backend: b})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	send := func(text string) {
		m.input.SetValue(text)
		_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
		for _, msg := range drain(cmd) {
			if am, ok := msg.(attachedMsg); ok {
				m.Update(am)
			}
		}
	}
	send("summarise @../secret.txt please")
	if m.input.Value() != "summarise @../secret.txt please" || !strings.Contains(m.note, "not sent: @../secret.txt: refused") || len(b.tasks) != 0 {
		t.Fatalf("a refused path: input %q, note %q", m.input.Value(), m.note)
	}
	m.input.Reset()
	send("summarise @notes.md, please")
	task := <-b.tasks
	if !strings.HasPrefix(task, "summarise @notes.md, please\n\n<attached path=\"notes.md\">\n1\t# Notes\n</attached>") {
		t.Fatalf("the task sent: %q", task)
	}
	m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: task}))
	v := m.View()
	if !strings.Contains(v, "📎 notes.md") || strings.Contains(v, "</attached>") {
		t.Errorf("the chat does not show the attachment as a chip:\n%s", v)
	}
}

// drain runs cmd and the batches it holds, and returns their messages
// (those that come at once; a command that waits is left).
func drain(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	var out []tea.Msg
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			if c != nil && !cmdIs(c, "waitForEvent.func") && !cmdIs(c, "spinner") {
				out = append(out, drain(c)...)
			}
		}
	default:
		out = append(out, msg)
	}
	return out
}

func TestMentions(t *testing.T) {
	got := strings.Join(mentions(`read @a.go, @docs/x.md) and mail me@example.com or @@x "@q.txt"`), "|")
	if got != "a.go|docs/x.md" {
		t.Errorf("mentions = %q", got)
	}
}

// TestAtOpensAFileList: typing @ asks the backend for the workspace's
// files once, lists those that match what follows, and tab puts the
// chosen path in.
func TestAtOpensAFileList(t *testing.T) {
	b := attachBackend{newStreamBackend(), make(chan string, 1)}
	m := New(Config{Style: "notty", Backend: b})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("read @no")})
	var listed bool
	for _, msg := range drain(cmd) {
		if fl, ok := msg.(filesListedMsg); ok {
			listed = true
			m.Update(fl)
		}
	}
	if !listed {
		t.Fatal("@ did not ask for the files")
	}
	if v := m.View(); !strings.Contains(v, "Files (tab puts it in") || !strings.Contains(v, "notes.md") {
		t.Fatalf("the list is not shown:\n%s", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyTab})
	if m.input.Value() != "read @notes.md " {
		t.Errorf("tab put in %q", m.input.Value())
	}
	_, cmd = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("@x")})
	for _, msg := range drain(cmd) {
		if _, ok := msg.(filesListedMsg); ok {
			t.Error("the files were asked for twice")
		}
	}
}

// The file list puts names that begin with what is typed first, then
// names that hold it, then paths that hold its letters in order; folders
// are there too.
func TestMentionMatchesRank(t *testing.T) {
	m := New(Config{Style: "notty"})
	m.mention.files = []string{".gitignore", "docs/guide.md", "README.md", "src/", "src/readme_test.go", "x/r/e/a/d.go"}
	if got := strings.Join(m.mentionMatches("re"), " "); got != "README.md src/readme_test.go .gitignore x/r/e/a/d.go" {
		t.Errorf("@re lists %q", got)
	}
	if got := strings.Join(m.mentionMatches("src"), " "); !strings.HasPrefix(got, "src/ ") {
		t.Errorf("@src lists %q: the folder first", got)
	}
}

// A session another agentty writes now (paused live there) is running in
// the picker, not interrupted; an eval's is marked.
func TestPickerSaysRunning(t *testing.T) {
	if got := (pickItem{SessionInfo{Title: "t", Running: true}}).Title(); got != "t [running]" {
		t.Errorf("a session written elsewhere: %q", got)
	}
	if got := (pickItem{SessionInfo{Title: "t", Interrupted: true, Origin: "eval"}}).Title(); got != "t [interrupted] [eval]" {
		t.Errorf("an interrupted eval's: %q", got)
	}
}

// TestInspectorShowsAttachments: a file attached with @ is a part of its
// own in the request inspector, with its tokens and the message it rides
// on.
func TestInspectorShowsAttachments(t *testing.T) {
	g := NewGate(false)
	g.SetBreaks([]engine.Break{mustBreak(t, "step=1")})
	body := strings.Repeat("1. milk and eggs and bread\n", 40)
	task := "summarise @notes.md" + attachOpen + "notes.md\">\n" + body + "</attached>"
	m := pausedConsole(t, engine.Config{Model: offline.Model{}, Tools: registry(t)}, g, task, 120, 40)
	m.Update(keyNamed("i"))
	v := m.View()
	want := fmt.Sprintf("@notes.md %21s tokens  attached to message 0", kTok(engine.EstimateTokens(strings.TrimSuffix(body, "\n"))))
	if !strings.Contains(v, want) {
		t.Fatalf("the inspector does not show the attachment as a part (%q):\n%s", want, v)
	}
}
