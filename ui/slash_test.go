package ui

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentty/agentty/engine"
)

// cmdBackend is a backend with the slash commands: it records what it is
// asked, journals nothing, and compacts with a made-up summary.
type cmdBackend struct {
	s      *engine.Session
	model  string
	calls  []string
	starts []string
	next   *cmdBackend // what Fork and Clear open
}

var _ Commander = (*cmdBackend)(nil)

func newCmdBackend(id string) *cmdBackend {
	return &cmdBackend{s: engine.NewSession(id), model: "offline"}
}

func (b *cmdBackend) Start(_ context.Context, task string) <-chan engine.Event {
	b.starts = append(b.starts, task)
	ch := make(chan engine.Event)
	close(ch)
	return ch
}
func (b *cmdBackend) Continue(context.Context) <-chan engine.Event { return nil }
func (b *cmdBackend) ChangeMemory(c engine.MemoryChanged) (engine.Event, error) {
	return b.s.ChangeMemory(c, nil)
}
func (b *cmdBackend) SessionID() string { return b.s.ID }
func (b *cmdBackend) Close() error      { return nil }

func (b *cmdBackend) Compact(_ context.Context, focus string) <-chan engine.Event {
	b.calls = append(b.calls, "compact "+focus)
	ch := make(chan engine.Event, 1)
	ch <- engine.Event{V: engine.SchemaVersion, Session: b.s.ID, Step: 4, Phase: engine.Perceive, Kind: engine.KindContextCompacted,
		Data: &engine.ContextCompacted{Summary: "The user is Ada.\nShe asked for 17*23 (391).", Upto: 6, Messages: 6, TokensBefore: 9100,
			TokensAfter: 2300, Usage: engine.Usage{PromptTokens: 120, CompletionTokens: 30}, Model: "offline", Focus: focus, Manual: true}}
	close(ch)
	return ch
}
func (b *cmdBackend) SetModel(name string) (engine.Event, error) {
	b.calls = append(b.calls, "model "+name)
	if name != "offline" && name != "gpt-4o" {
		return engine.Event{}, fmt.Errorf("model %q needs OPENAI_API_KEY", name)
	}
	ev, err := b.s.ChangeModel(name, nil)
	if err == nil {
		b.model = name
	}
	return ev, err
}
func (b *cmdBackend) SetAgent(name string) (engine.Event, error) {
	b.calls = append(b.calls, "agent "+name)
	if name != "critic" {
		return engine.Event{}, fmt.Errorf("no agent %q: the agents are critic", name)
	}
	return b.s.SwitchAgent(name, nil)
}
func (b *cmdBackend) Fork(step int) (Backend, []engine.Event, error) {
	b.calls = append(b.calls, fmt.Sprint("fork ", step))
	return b.next, nil, nil
}
func (b *cmdBackend) Clear() (Backend, []engine.Event, error) {
	b.calls = append(b.calls, "clear")
	return b.next, nil, nil
}
func (b *cmdBackend) Export(format, file string) (string, error) {
	b.calls = append(b.calls, "export "+format+" "+file)
	return "/tmp/" + strings.TrimPrefix(file+"", "") + "." + format, nil
}
func (b *cmdBackend) Trust() (string, error) {
	b.calls = append(b.calls, "trust")
	return "", errors.New("/ws is not a folder")
}
func (b *cmdBackend) ModelName() string { return b.model }

// typeLine types text into the console, key by key, and settles.
func typeLine(m *Model, text string) {
	for _, r := range text {
		_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
		settle(m, cmd)
	}
}

func pressKey(m *Model, k tea.KeyType) {
	_, cmd := m.Update(tea.KeyMsg{Type: k})
	settle(m, cmd)
}

// notes returns the Chat's notes, in order.
func notes(m *Model) []string {
	var out []string
	for _, it := range m.chat.items {
		if it.kind == itemNote {
			out = append(out, it.text)
		}
	}
	return out
}

func lastNote(m *Model) string {
	n := notes(m)
	if len(n) == 0 {
		return ""
	}
	return n[len(n)-1]
}

// TestSlashList: "/" opens the list of commands over the input, typing
// filters it, ↑/↓ choose, tab completes, esc closes it until the text
// changes, and a space (arguments) closes it.
func TestSlashList(t *testing.T) {
	m := New(Config{Style: "notty", Backend: newCmdBackend("s"), Model: "offline"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	typeLine(m, "/")
	list, open := m.completions()
	if !open || len(list) != len(commands) {
		t.Fatalf("after /: open %v with %d commands, want all %d", open, len(list), len(commands))
	}
	frame := ansi.Strip(m.View())
	if !strings.Contains(frame, "Commands (tab completes") || !strings.Contains(frame, "/compact [focus]") || !strings.Contains(frame, "/export [md|json] [FILE]") {
		t.Fatalf("the list is not drawn:\n%s", frame)
	}
	if n := len(strings.Split(m.View(), "\n")); n != 40 {
		t.Fatalf("the frame has %d lines with the list open, want 40", n)
	}
	typeLine(m, "m")
	list, _ = m.completions()
	if names := commandList(list); !slices.Equal(names, []string{"model", "memory", "mouse"}) {
		t.Fatalf("after /m the list has %v, want model, memory and mouse", names)
	}
	pressKey(m, tea.KeyDown)
	pressKey(m, tea.KeyTab)
	if got := m.input.Value(); got != "/memory" {
		t.Fatalf("down, tab: the input has %q, want /memory (it takes no argument)", got)
	}
	if m.focus != focusInput {
		t.Fatal("tab moved the focus while the list was open")
	}
	m.setInput("/mo")
	pressKey(m, tea.KeyTab)
	if got := m.input.Value(); got != "/model " {
		t.Fatalf("/mo, tab: %q, want %q", got, "/model ")
	}
	if _, open := m.completions(); open {
		t.Fatal("the list is still open while the arguments are typed")
	}
	m.setInput("/co")
	pressKey(m, tea.KeyEsc)
	if _, open := m.completions(); open {
		t.Fatal("esc did not close the list")
	}
	typeLine(m, "m")
	if _, open := m.completions(); !open {
		t.Fatal("the list did not open again as the text changed")
	}
	m.setInput("//co")
	if _, open := m.completions(); open {
		t.Fatal("// (a message that starts with /) opened the list")
	}
	m.setInput("/zz")
	if list, open := m.completions(); !open || len(list) != 0 || !strings.Contains(ansi.Strip(m.View()), "no command /zz") {
		t.Fatalf("/zz: open %v, %d commands, frame:\n%s", open, len(list), ansi.Strip(m.View()))
	}
	m.Update(tea.WindowSizeMsg{Width: 20, Height: 8})
	if lines := strings.Split(m.View(), "\n"); len(lines) != 8 {
		t.Fatalf("20x8 with the list: %d lines", len(lines))
	}
}

func commandList(cs []command) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.name)
	}
	return out
}

// TestSlashCommands runs each command through the input, its I/O done by
// the commands Update returns, and checks what the backend was asked and
// what the console shows; nothing is sent to the model.
func TestSlashCommands(t *testing.T) {
	b := newCmdBackend("0mx2cmd00001")
	b.next = newCmdBackend("0mx2cmd00002")
	m := New(Config{Style: "notty", Backend: b, Model: "offline"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	run := func(line string) {
		t.Helper()
		m.setInput(line)
		_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
		settle(m, cmd)
	}

	run("/model gpt-4o")
	if m.model != "gpt-4o" || !strings.Contains(m.statusLine(), "model gpt-4o") || m.sess.Model != "gpt-4o" {
		t.Fatalf("after /model gpt-4o: model %q, session %q, status %q", m.model, m.sess.Model, m.statusLine())
	}
	run("/model nope")
	if m.model != "gpt-4o" || !strings.Contains(lastNote(m), `/model: model "nope" needs OPENAI_API_KEY`) {
		t.Fatalf("after /model nope: model %q, note %q", m.model, lastNote(m))
	}
	run("/model")
	if !strings.Contains(lastNote(m), "now gpt-4o") {
		t.Fatalf("/model alone: %q", lastNote(m))
	}
	run("/agent critic")
	if m.sess.Agent != "critic" || !strings.Contains(lastNote(m), "handed off to critic") {
		t.Fatalf("after /agent critic: agent %q, note %q", m.sess.Agent, lastNote(m))
	}
	run("/agent nobody")
	if !strings.Contains(lastNote(m), "the agents are critic") {
		t.Fatalf("/agent nobody: %q", lastNote(m))
	}
	run("/export json out.json")
	run("/export")
	run("/export notes.md")
	if !strings.Contains(lastNote(m), "Exported the session to /tmp/notes.md.md") {
		t.Fatalf("/export: %q", lastNote(m))
	}
	calls := len(b.calls)
	run("/export xml")
	if !strings.Contains(lastNote(m), `unknown format "xml": the formats are md and json`) || len(b.calls) != calls {
		t.Fatalf("/export xml: %q, calls %v", lastNote(m), b.calls[calls:])
	}
	run("/export md")
	if !strings.Contains(lastNote(m), "Exported the session") {
		t.Fatalf("/export after a bad format: %q", lastNote(m))
	}
	run("/trust")
	if !strings.Contains(lastNote(m), "/trust: /ws is not a folder") {
		t.Fatalf("/trust: %q", lastNote(m))
	}
	run("/fork x")
	if !strings.Contains(lastNote(m), `/fork STEP takes a step number (0 to 0), not "x"`) {
		t.Fatalf("/fork x: %q", lastNote(m))
	}
	run("/nope")
	if !strings.Contains(lastNote(m), "Unknown command /nope: the commands are /compact /clear") {
		t.Fatalf("/nope: %q", lastNote(m))
	}
	run("/memory")
	if m.focus != focusMemory {
		t.Fatal("/memory did not focus the Memory pane")
	}
	m.setFocus(focusInput)
	run("/help")
	if !m.help.open {
		t.Fatal("/help did not open the help")
	}
	m.help.open = false
	run("/compact the names")
	if !m.running || m.state != "compacting" {
		t.Fatalf("/compact: running %v, state %q", m.running, m.state)
	}
	m.Update(waitForEvent(m.events)())
	m.Update(waitForEvent(m.events)())
	if m.running || m.state != "idle" {
		t.Fatalf("after the compaction: running %v, state %q", m.running, m.state)
	}
	want := []string{"model gpt-4o", "model nope", "agent critic", "agent nobody", "export json out.json", "export md ",
		"export md notes.md", "export md ", "trust", "compact the names"}
	if !slices.Equal(b.calls, want) {
		t.Fatalf("the backend was asked\n%q\nwant\n%q", b.calls, want)
	}
	var row *row
	for i := range m.tl.rows {
		if m.tl.rows[i].compact != nil {
			row = &m.tl.rows[i]
		}
	}
	if row == nil || compactRow("", row.step, row.compact, 60) != "⇊   4 compacted 6 msgs, 9.1k → 2.3k tok" || row.status != "manual" {
		t.Fatalf("the compaction's row: %+v", row)
	}
	m.setFocus(focusTimeline)
	pressKey(m, tea.KeyEnter)
	detail := strings.Join(m.detail.lines, "\n")
	for _, s := range []string{"Context compacted at step 4, when asked", "the first 6 messages", "Tokens: 9100 before, 2300 after",
		"Model: offline, 120 tokens in, 30 out", "Focus: the names", "The user is Ada."} {
		if !strings.Contains(detail, s) {
			t.Errorf("the details lack %q:\n%s", s, detail)
		}
	}
	pressKey(m, tea.KeyEsc)
	m.setFocus(focusInput)

	run("//etc/hosts says what?")
	if !slices.Equal(b.starts, []string{"/etc/hosts says what?"}) {
		t.Fatalf("// sent %q, want the text with one /", b.starts)
	}
	m.Update(waitForEvent(m.events)())
	run("/clear")
	if m.Backend() != b.next || !strings.Contains(lastNote(m), "A new session") {
		t.Fatalf("/clear: on %s, note %q", m.Backend().SessionID(), lastNote(m))
	}
	b.next.next = newCmdBackend("0mx2cmd00003")
	run("/fork 0")
	if m.Backend() != b.next.next || !strings.Contains(lastNote(m), "A fork of 0mx2cmd00002 at step 0") {
		t.Fatalf("/fork: on %s, note %q", m.Backend().SessionID(), lastNote(m))
	}
	if len(b.starts) != 1 {
		t.Fatalf("commands were sent to the model: %q", b.starts)
	}
}

// TestSlashCommandsElsewhere: a read-only session has no commands (but
// /help and /memory), and a run going refuses those that change the
// session.
func TestSlashCommandsElsewhere(t *testing.T) {
	m := New(Config{Style: "notty", Backend: &memBackend{s: engine.NewSession("ro")}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.setInput("/model x")
	pressKey(m, tea.KeyEnter)
	if !strings.Contains(lastNote(m), "/model is not here: this session is read-only") {
		t.Fatalf("read-only: %q", lastNote(m))
	}
	b := newCmdBackend("s")
	m = New(Config{Style: "notty", Backend: b})
	m.running = true
	m.setInput("/compact")
	pressKey(m, tea.KeyEnter)
	if !strings.Contains(lastNote(m), "/compact: a run is going") || len(b.calls) != 0 {
		t.Fatalf("during a run: %q, calls %q", lastNote(m), b.calls)
	}
}

// TestCompactionEventsInTheConsole: a run's compaction (its
// context_compacted, a notice that it fell back to trimming) shows as a
// row in the Timeline, a note in the Chat, and in the Memory pane's bar
// the window, the trigger and each part.
func TestCompactionEventsInTheConsole(t *testing.T) {
	m := New(Config{Style: "notty", Backend: newCmdBackend("s")})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	ev := func(step int, kind engine.Kind, data any) engine.Event {
		return engine.Event{V: engine.SchemaVersion, Session: "s", Run: "run-1", Step: step, Kind: kind, Time: time.Now(), Data: data}
	}
	for _, e := range []engine.Event{
		ev(0, engine.KindRunStarted, &engine.RunStarted{Task: "go on", Model: "gpt-4o", Instructions: []string{"AGENTS.md", "~/.config/agentty/AGENTS.md"}}),
		ev(1, engine.KindStepStarted, &engine.StepStarted{}),
		ev(1, engine.KindContextCompacted, &engine.ContextCompacted{Summary: "s", Upto: 1, Messages: 1, TokensBefore: 100_000, TokensAfter: 20_000}),
		ev(1, engine.KindNotice, &engine.Notice{Level: "warning", Message: "the summary did not fit: the oldest history is trimmed instead"}),
		ev(1, engine.KindModelRequest, &engine.ModelRequest{Messages: 3, Tokens: 40_000, SystemTokens: 2000, InstructionTokens: 4000,
			SummaryTokens: 8000, MemoryTokens: 1000, ToolTokens: 5000, Budget: 100_000, Trigger: 80_000, Window: 128_000}),
	} {
		m.Update(engineEventMsg{e})
	}
	if !strings.Contains(m.statusLine(), "model gpt-4o") {
		t.Errorf("the status line does not name the run's model: %q", m.statusLine())
	}
	if got := notes(m); !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "trimmed instead") }) {
		t.Errorf("the notice is not in the Chat: %q", got)
	}
	frame := ansi.Strip(m.View())
	for _, s := range []string{"⇊   1 compacted 1 msg, 100k → 20k tok", "s 2k i 4k c 8k m 1k h 20k t 5k", "window 128k · compacts at 80k (|)",
		"instructions: AGENTS.md, ~/.confi", "context: 40000 / 100000 tok (40%)"} {
		if !strings.Contains(frame, s) {
			t.Errorf("the frame lacks %q:\n%s", s, frame)
		}
	}
	bar := ""
	for _, l := range strings.Split(frame, "\n") {
		if i := strings.Index(l, "[s"); i >= 0 {
			bar = l[i:]
		}
	}
	if !regexp.MustCompile(`^\[s+i+c+m+h+t+·+\|·+-+\]`).MatchString(bar) {
		t.Errorf("the bar %q lacks the trigger (|), the window past the budget (-), the instructions or the summary", bar)
	}
}
