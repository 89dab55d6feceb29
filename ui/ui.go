// Package ui is agentty's console: a Bubble Tea program with the chat, a
// timeline of every step and the agent's memory side by side, an input
// below, and a status line. The engine runs outside the Bubble Tea loop; its
// events arrive as messages, one per Cmd, and Update and View never block or
// do I/O. Stepping goes through Gate, which hands each pause to the console.
package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentty/agentty/engine"
)

// Backend is what the console needs to run agents on one session. Start and
// Continue return the run's events on a channel that is closed after
// run_finished; the events have been journaled before they arrive.
type Backend interface {
	Start(ctx context.Context, task string) <-chan engine.Event
	Continue(ctx context.Context) <-chan engine.Event
	// ChangeMemory applies and journals the person's edit of a fact.
	ChangeMemory(c engine.MemoryChanged) (engine.Event, error)
	// SessionID names the session.
	SessionID() string
	// Close ends the console's use of the session (a journal is synced
	// and its meta written). It may be called more than once.
	Close() error
}

// Sessions lists sessions and opens one, for the picker.
type Sessions interface {
	List() ([]SessionInfo, error)
	// Open returns a backend on the session and its journaled events.
	Open(id string) (Backend, []engine.Event, error)
}

// SessionInfo is one session as the picker lists it.
type SessionInfo struct {
	ID, Title, Model string
	Updated          time.Time
	Steps            int   // the last step's number
	Interrupted      bool  // its last run has no run_finished
	Err              error // why it cannot be read in full (damaged)
}

// Config sets up the console.
type Config struct {
	Backend Backend // nil: open the picker first
	// Events are the journaled events of a resumed session.
	Events   []engine.Event
	Sessions Sessions
	Gate     *Gate
	Model    string
	// Notice is shown in the chat at start (the offline model says so).
	Notice string
	// Status is kept on the status line (MCP servers that are down).
	Status string
	// Style is glamour's style name: dark (default), light or notty.
	Style string
}

type focus int

const (
	focusInput focus = iota
	focusChat
	focusTimeline
	focusMemory
)

var paneNames = map[focus]string{focusChat: "Chat", focusTimeline: "Timeline", focusMemory: "Memory"}

// Messages.
type (
	engineEventMsg struct{ ev engine.Event }
	runClosedMsg   struct{ ch <-chan engine.Event }
	gateMsg        struct{ req gateRequest }
	listedMsg      struct {
		list []SessionInfo
		err  error
	}
	openedMsg struct {
		backend Backend
		events  []engine.Event
		err     error
	}
	closedMsg        struct{ err error }
	memoryChangedMsg struct {
		backend Backend // the session it was made on
		ev      engine.Event
		err     error
	}
)

// The console's I/O is done by these commands, off the Bubble Tea loop;
// their results come back to Update as messages.

// listSessions lists the sessions for the picker.
func listSessions(s Sessions) tea.Cmd {
	return func() tea.Msg {
		l, err := s.List()
		return listedMsg{l, err}
	}
}

// openSession opens a session picked in the picker.
func openSession(s Sessions, id string) tea.Cmd {
	return func() tea.Msg {
		b, evs, err := s.Open(id)
		return openedMsg{b, evs, err}
	}
}

// closeBackend closes a session the console is done with.
func closeBackend(b Backend) tea.Cmd {
	return func() tea.Msg { return closedMsg{b.Close()} }
}

// changeMemory applies and journals the person's edit of a fact.
func changeMemory(b Backend, c engine.MemoryChanged) tea.Cmd {
	return func() tea.Msg {
		ev, err := b.ChangeMemory(c)
		return memoryChangedMsg{b, ev, err}
	}
}

// waitForEvent reads one event of a run; Update re-arms it.
func waitForEvent(ch <-chan engine.Event) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return runClosedMsg{ch}
		}
		return engineEventMsg{ev}
	}
}

// waitForGate reads one pause from the gate; Update re-arms it.
func waitForGate(g *Gate) tea.Cmd {
	return func() tea.Msg { return gateMsg{<-g.requests} }
}

// Model is the console's root model.
type Model struct {
	cfg     Config
	backend Backend
	gate    *Gate

	width, height int
	focus         focus
	shown         focus // the pane shown when the terminal is narrow

	chat  chat
	tl    timeline
	mem   memory
	clean eventCleaner // makes the events' text safe to draw

	input    textarea.Model
	history  []string
	histIdx  int
	keys     keyMap
	help     help.Model
	showHelp bool
	spin     spinner.Model

	// sess is the session as the console has seen it: every event goes
	// through its Apply, and memory, usage, steps and "interrupted" are
	// read from it. The console never changes it otherwise.
	sess *engine.Session

	running  bool
	events   <-chan engine.Event
	cancel   context.CancelCauseFunc // cancels the run going on, with a cause
	state    string
	pause    *gateRequest
	released bool // c let this run go on without step pauses

	argsEditor *textarea.Model
	editorErr  string // why the edited arguments were refused
	memForm    *textinput.Model
	detail     []string
	detailTop  int
	picker     *list.Model
	note       string
	quitting   bool
	opening    bool      // a session is being opened from the picker
	saving     int       // memory edits sent to the backend and not back yet
	retired    []Backend // sessions switched away from, closed by a command

	// Caches of what View drew, for the parts that change rarely.
	inputCache []string
	helpCache  [2]string // short and full, as chrome may try both in a frame
	helpKey    [2]helpKey
	borders    map[borderKey]string
	blanks     string
}

// New returns the console model.
func New(cfg Config) *Model {
	if cfg.Gate == nil {
		cfg.Gate = NewGate(false)
	}
	if cfg.Style == "" {
		cfg.Style = "dark"
	}
	cfg.Notice, cfg.Status, cfg.Model = Sanitize(cfg.Notice), flatten(Sanitize(cfg.Status)), flatten(Sanitize(cfg.Model))
	in := textarea.New()
	in.Placeholder = "Ask the agent… (enter sends, alt+enter for a new line)"
	in.ShowLineNumbers = false
	in.Prompt = ""
	in.SetHeight(2)
	in.CharLimit = 0
	in.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"))
	in.Focus()
	sp := spinner.New()
	sp.Spinner = spinner.Dot
	m := &Model{
		cfg: cfg, gate: cfg.Gate, input: in, keys: newKeyMap(), help: help.New(), spin: sp,
		chat: newChat(cfg.Style), tl: newTimeline(), state: "idle", shown: focusChat, width: 120, height: 40,
	}
	m.setBackend(cfg.Backend, cfg.Events)
	if cfg.Notice != "" {
		m.chat.add(&chatItem{kind: itemNote, text: cfg.Notice})
	}
	m.layout()
	return m
}

// setBackend switches the console to a session and rebuilds the panes from
// its journaled events.
func (m *Model) setBackend(b Backend, events []engine.Event) {
	m.backend = b
	id := ""
	if b != nil {
		id = b.SessionID()
	}
	m.sess = engine.NewSession(id)
	m.chat = newChat(m.cfg.Style)
	m.tl = newTimeline()
	m.mem = memory{sess: m.sess}
	m.clean.reset()
	for _, ev := range events {
		m.applyEvent(ev)
	}
	if m.sess.Interrupted() {
		m.tl.interrupt()
		m.chat.add(&chatItem{kind: itemNote, text: "The last run was interrupted. Press ctrl+r to continue it, or send a new task."})
	}
	m.state = "idle"
	m.layout()
}

// canContinue reports whether ctrl+r continues a run: the engine's fold of
// the session says its last run was interrupted, and none is going.
func (m *Model) canContinue() bool {
	return !m.running && m.backend != nil && m.sess.Interrupted()
}

// Init starts listening to the gate (and loads the picker when there is no
// session yet).
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{textarea.Blink, waitForGate(m.gate)}
	if m.backend == nil {
		cmds = append(cmds, m.listSessions())
	}
	return tea.Batch(cmds...)
}

func (m *Model) listSessions() tea.Cmd {
	if m.cfg.Sessions == nil {
		return nil
	}
	return listSessions(m.cfg.Sessions)
}

// retire hands a session the console is done with to a command that
// closes it; Run closes it too, should the program end first.
func (m *Model) retire(b Backend) tea.Cmd {
	m.retired = append(m.retired, b)
	return closeBackend(b)
}

func (m *Model) applyEvent(ev engine.Event) {
	ev = m.clean.event(ev) // foreign text is made safe here, before anything measures it
	// The engine's fold, the one place state is derived: a bad sequence
	// (a tool result for no call) leaves the session as it was.
	_ = m.sess.Apply(ev)
	m.chat.apply(ev)
	m.tl.apply(ev)
	m.mem.apply(ev)
	switch d := ev.Data.(type) {
	case *engine.RunStarted, *engine.GateResumed, *engine.StepStarted:
		m.state = "thinking"
	case *engine.TextDelta:
		if d.Reasoning {
			m.state = "reasoning" // the detail view shows it once decided
		} else {
			m.state = "answering"
		}
	case *engine.ToolStarted:
		m.state = "running " + d.Name
	case *engine.GatePaused:
		m.state = "paused"
	case *engine.RunFinished:
		m.state = "idle"
	}
}

// Update handles one message. It never blocks and does no I/O.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg.(type) {
	case engineEventMsg, spinner.TickMsg, runClosedMsg:
	default:
		m.inputCache = nil // keys, blinks, sizes and pauses change the input box
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		if m.picker != nil {
			m.picker.SetSize(m.width, m.height)
		}
		return m, nil
	case engineEventMsg:
		m.applyEvent(msg.ev)
		if m.events == nil {
			return m, nil
		}
		return m, waitForEvent(m.events)
	case runClosedMsg:
		if msg.ch == m.events {
			m.running, m.events, m.pause, m.released = false, nil, nil, false
			if m.cancel != nil {
				m.cancel(nil)
				m.cancel = nil
			}
			m.state = "idle"
			if m.note == noteCancelling { // the cancel is done
				m.note = ""
			}
		}
		return m, nil
	case gateMsg:
		req := msg.req
		m.pause = &req
		m.state = "paused"
		m.tl.followEnd() // the pending row is at the end
		return m, waitForGate(m.gate)
	case listedMsg:
		m.openPicker(msg.list, msg.err)
		return m, nil
	case openedMsg:
		m.opening = false
		if msg.err != nil {
			m.note = msg.err.Error()
			return m, nil
		}
		if m.running {
			m.note = "a run is going: finish it before switching sessions"
			return m, m.retire(msg.backend) // a run began meanwhile: keep what it runs on
		}
		var cmd tea.Cmd
		if m.backend != nil {
			cmd = m.retire(m.backend)
		}
		m.setBackend(msg.backend, msg.events)
		return m, cmd
	case closedMsg:
		if msg.err != nil {
			m.note = msg.err.Error()
		}
		return m, nil
	case memoryChangedMsg:
		m.saving--
		switch {
		case msg.backend != m.backend: // the session was switched meanwhile
		case msg.err != nil:
			m.note = msg.err.Error()
		default:
			m.applyEvent(msg.ev)
		}
		return m, nil
	case spinner.TickMsg:
		if !m.running || m.pause != nil {
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	case tea.MouseMsg:
		if msg.Action == tea.MouseActionPress {
			switch msg.Button {
			case tea.MouseButtonWheelUp:
				m.chat.scroll(-3)
			case tea.MouseButtonWheelDown:
				m.chat.scroll(3)
			}
		}
		return m, nil
	case tea.KeyMsg:
		return m.key(msg)
	}
	if m.picker != nil {
		// The list's own messages (the filter's matches, its input's
		// blink, its status timeout) come back to it.
		var cmd tea.Cmd
		*m.picker, cmd = m.picker.Update(msg)
		return m, cmd
	}
	if m.focus == focusInput {
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return m, cmd
	}
	return m, nil
}

// noteCancelling is the status line's note from ctrl+c until the run ends.
const noteCancelling = "cancelling… (ctrl+c again quits)"

func (m *Model) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := msg.String()
	if k != "ctrl+c" {
		m.quitting = false
	} else if m.picker == nil {
		m.argsEditor, m.memForm, m.detail = nil, nil, nil
	}
	switch {
	case m.picker != nil:
		return m.pickerKey(msg)
	case m.argsEditor != nil:
		return m.editorKey(msg)
	case m.memForm != nil:
		return m.memFormKey(msg)
	case m.detail != nil:
		switch k {
		case "esc", "q", "enter":
			m.detail = nil
		case "up", "k":
			m.detailTop = max(m.detailTop-1, 0)
		case "down", "j":
			m.detailTop = min(m.detailTop+1, max(len(m.detail)-1, 0))
		case "pgup":
			m.detailTop = max(m.detailTop-10, 0)
		case "pgdown":
			m.detailTop = min(m.detailTop+10, max(len(m.detail)-1, 0))
		}
		return m, nil
	}
	if k == "esc" && m.showHelp { // the help is open over the rest: esc closes it first
		m.showHelp = false
		m.layout()
		return m, nil
	}
	switch k {
	case "ctrl+c":
		if m.running && !m.quitting {
			m.cancel(nil)
			m.note = noteCancelling
			m.quitting = true
			return m, nil
		}
		return m, tea.Quit
	case "ctrl+d":
		if !m.running {
			return m, tea.Quit
		}
	case "tab":
		m.cycleFocus(1)
		return m, nil
	case "shift+tab":
		m.cycleFocus(-1)
		return m, nil
	case "ctrl+t":
		on := !m.gate.Stepping()
		m.gate.SetStep(on)
		m.released = false
		m.note = map[bool]string{true: "step mode on: the run pauses before every decision and tool call", false: "step mode off"}[on]
		return m, nil
	case "ctrl+o":
		if m.running {
			m.note = "wait for the run to end (or ctrl+c) before switching sessions"
			return m, nil
		}
		return m, m.listSessions()
	case "ctrl+r":
		return m, m.continueRun()
	case "ctrl+x":
		m.chat.expanded = !m.chat.expanded
		m.chat.invalidate()
		return m, nil
	case "pgup":
		m.chat.scroll(-max(m.chat.height-2, 1))
		return m, nil
	case "pgdown":
		m.chat.scroll(max(m.chat.height-2, 1))
		return m, nil
	case "?":
		if m.focus != focusInput || m.input.Value() == "" {
			m.showHelp = !m.showHelp
			m.layout()
			return m, nil
		}
	}
	if m.pause != nil {
		return m.pauseKey(k)
	}
	if k == "esc" {
		m.setFocus(focusInput)
		return m, nil
	}
	switch m.focus {
	case focusChat:
		switch k {
		case "up", "k":
			m.chat.scroll(-1)
		case "down", "j":
			m.chat.scroll(1)
		case "home", "g":
			m.chat.scroll(-1 << 20)
		case "end", "G":
			m.chat.follow = true
		}
		return m, nil
	case focusTimeline:
		switch k {
		case "up", "k":
			m.tl.move(-1)
		case "down", "j":
			m.tl.move(1)
		case "pgup":
			m.tl.move(-m.tl.height)
		case "pgdown":
			m.tl.move(m.tl.height)
		case "enter":
			m.detail = m.tl.detailLines(m.width - 4)
			m.detailTop = 0
		}
		return m, nil
	case focusMemory:
		return m.memoryKey(k)
	}
	return m.inputKey(msg)
}

func (m *Model) inputKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch msg.String() {
	case "enter":
		task := strings.TrimSpace(m.input.Value())
		if task == "" {
			return m, nil
		}
		if m.running {
			m.note = "a run is going: wait for it, or ctrl+c to cancel it"
			return m, nil
		}
		if m.opening {
			m.note = "opening the session…"
			return m, nil
		}
		if m.saving > 0 {
			m.note = "saving the memory edit…"
			return m, nil
		}
		if m.backend == nil {
			m.note = "no session open: ctrl+o to pick one"
			return m, nil
		}
		m.history = append(m.history, task)
		m.histIdx = len(m.history)
		m.input.Reset()
		m.chat.follow = true
		return m, m.startRun(func(ctx context.Context) <-chan engine.Event { return m.backend.Start(ctx, task) })
	case "up", "down":
		if m.input.Value() == "" || m.histIdx < len(m.history) {
			if len(m.history) == 0 {
				return m, nil
			}
			if msg.String() == "up" {
				m.histIdx = max(m.histIdx-1, 0)
			} else {
				m.histIdx = min(m.histIdx+1, len(m.history))
			}
			if m.histIdx < len(m.history) {
				m.input.SetValue(m.history[m.histIdx])
			} else {
				m.input.Reset()
			}
			return m, nil
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

func (m *Model) startRun(start func(context.Context) <-chan engine.Event) tea.Cmd {
	ctx, cancel := context.WithCancelCause(context.Background())
	m.cancel = cancel
	m.events = start(ctx)
	m.running, m.released = true, false
	m.state = "thinking"
	m.note = ""
	m.tl.followEnd() // the new run's rows come at the end
	return tea.Batch(waitForEvent(m.events), m.spin.Tick)
}

func (m *Model) continueRun() tea.Cmd {
	if !m.canContinue() {
		m.note = "there is no interrupted run to continue"
		return nil
	}
	if m.saving > 0 {
		m.note = "saving the memory edit…"
		return nil
	}
	return m.startRun(m.backend.Continue)
}

// pauseKey answers the gate.
func (m *Model) pauseKey(k string) (tea.Model, tea.Cmd) {
	p := m.pause
	reply := func(v engine.Verdict) (tea.Model, tea.Cmd) {
		p.reply <- v
		m.pause = nil
		m.state = "thinking"
		return m, m.spin.Tick
	}
	switch k {
	case "enter", "y":
		return reply(engine.Verdict{Action: engine.Proceed})
	case "c":
		// In step mode: go on, and let this run finish without step
		// pauses; the next run pauses again. An approval outside step
		// mode has nothing to continue past: enter or y approves it.
		if m.gate.Stepping() {
			m.gate.Release(p.pending.Run)
			m.released = true
			return reply(engine.Verdict{Action: engine.Proceed})
		}
	case "s":
		if p.pending.ToolCall != nil {
			return reply(engine.Verdict{Action: engine.Skip})
		}
	case "n":
		if p.pending.ToolCall != nil {
			return reply(engine.Verdict{Action: engine.Deny})
		}
	case "esc":
		return reply(engine.Verdict{Action: engine.Abort})
	case "e":
		if p.pending.ToolCall != nil {
			ed := textarea.New()
			ed.ShowLineNumbers = false
			ed.SetWidth(max(m.width-6, 20))
			ed.SetHeight(max(m.height-10, 5))
			ed.SetValue(Sanitize(prettyJSON(string(p.pending.ToolCall.Args))))
			ed.Focus()
			m.argsEditor, m.editorErr = &ed, ""
			return m, textarea.Blink
		}
	}
	return m, nil
}

// editorKey edits the paused tool call's arguments; ctrl+s checks that they
// are JSON and goes on with them.
func (m *Model) editorKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch msg.String() {
	case "esc":
		m.argsEditor = nil
		m.note = "edit cancelled"
		return m, nil
	case "ctrl+s":
		text := m.argsEditor.Value()
		var v map[string]any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			m.editorErr = "not a JSON object: " + err.Error()
			m.note = m.editorErr
			return m, nil
		}
		compact, _ := json.Marshal(v)
		m.argsEditor, m.editorErr = nil, ""
		if m.pause == nil {
			return m, nil
		}
		m.pause.reply <- engine.Verdict{Action: engine.Proceed, Args: compact}
		m.pause = nil
		m.state = "thinking"
		m.note = "edited arguments sent"
		return m, m.spin.Tick
	}
	var cmd tea.Cmd
	*m.argsEditor, cmd = m.argsEditor.Update(msg)
	return m, cmd
}

func (m *Model) memoryKey(k string) (tea.Model, tea.Cmd) {
	switch k {
	case "up", "k":
		m.mem.move(-1)
	case "down", "j":
		m.mem.move(1)
	case "a", "e":
		if m.running {
			m.note = "memory can be edited when no run is going"
			return m, nil
		}
		ti := textinput.New()
		ti.Prompt = "key = value: "
		ti.Width = max(m.width-20, 10)
		if f, ok := m.mem.selected(); ok && k == "e" {
			ti.SetValue(f.Key + " = " + f.Value)
		}
		ti.Focus()
		m.memForm = &ti
		return m, textinput.Blink
	case "d":
		if f, ok := m.mem.selected(); ok {
			return m, m.changeMemory(engine.MemoryChanged{Op: engine.MemoryDelete, Key: f.Key, Source: "person"})
		}
	}
	return m, nil
}

func (m *Model) memFormKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch msg.String() {
	case "esc":
		m.memForm = nil
		return m, nil
	case "enter":
		k, v, ok := strings.Cut(m.memForm.Value(), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			m.note = "write it as key = value"
			return m, nil
		}
		m.memForm = nil
		return m, m.changeMemory(engine.MemoryChanged{Op: engine.MemorySet, Key: k, Value: v, Source: "person"})
	}
	var cmd tea.Cmd
	*m.memForm, cmd = m.memForm.Update(msg)
	return m, cmd
}

// changeMemory sends the person's edit to the backend, which journals it;
// the event comes back as a memoryChangedMsg.
func (m *Model) changeMemory(c engine.MemoryChanged) tea.Cmd {
	if m.backend == nil {
		return nil
	}
	m.saving++
	return changeMemory(m.backend, c)
}

func (m *Model) cycleFocus(d int) {
	order := []focus{focusInput, focusChat, focusTimeline, focusMemory}
	i := 0
	for j, f := range order {
		if f == m.focus {
			i = j
		}
	}
	m.setFocus(order[(i+d+len(order))%len(order)])
}

func (m *Model) setFocus(f focus) {
	m.focus = f
	if f == focusInput {
		m.input.Focus()
	} else {
		m.input.Blur()
		m.shown = f
	}
}

// Layout sizes.
const wideWidth = 120

func (m *Model) wide() bool { return m.width >= wideWidth }

func (m *Model) widths() (chatW, tlW, memW int) {
	if !m.wide() {
		return m.width, m.width, m.width
	}
	chatW = m.width * 48 / 100
	tlW = m.width * 30 / 100
	return chatW, tlW, m.width - chatW - tlW
}

// paneHeight is the height of the panes' content (inside their borders).
func (m *Model) paneHeight() int {
	_, _, h := m.chrome()
	return h
}

// The help below the status line.
const (
	helpNone = iota
	helpShort
	helpFull
)

// chrome decides what fits in the terminal's height around the panes: the
// help (full when asked for, else short, or none on a tiny terminal) and a
// narrow terminal's tab bar, which give way, in that order, until the panes
// have 3 lines; and it returns the panes' height inside their borders (1 at
// the least, as on a 20×8 terminal).
func (m *Model) chrome() (help int, tabs bool, paneH int) {
	help, tabs = helpShort, !m.wide()
	if m.showHelp {
		help = helpFull
	}
	for {
		h := m.height - 2 /* pane borders */ - 4 /* input box */ - 1 /* status */ - m.helpLines(help)
		if tabs {
			h--
		}
		switch {
		case h >= 3 || help == helpNone && !tabs:
			return help, tabs, max(h, 1)
		case help == helpFull:
			help = helpShort
		case help == helpShort:
			help = helpNone
		default:
			tabs = false
		}
	}
}

func (m *Model) helpLines(help int) int {
	if help == helpNone {
		return 0
	}
	return strings.Count(m.helpView(help == helpFull), "\n") + 1
}

func (m *Model) layout() {
	m.help.Width = m.width // before paneHeight, which draws the help
	chatW, _, _ := m.widths()
	h := m.paneHeight()
	if m.chat.width != chatW-2 {
		m.chat.width = chatW - 2
		m.chat.invalidate()
	}
	m.chat.height, m.tl.height, m.mem.height = h, h, h
	m.input.SetWidth(max(m.width-4, 10))
}

// View draws the console. It only reads the model.
func (m *Model) View() string {
	switch {
	case m.picker != nil:
		return pickerView(m.picker, m.width, m.height)
	case m.argsEditor != nil:
		return m.editorView()
	case m.detail != nil:
		return m.detailView()
	}
	var b strings.Builder
	b.Grow(m.width * m.height * 3) // box-drawing characters take three bytes
	help, tabs, h := m.chrome()
	chatW, tlW, memW := m.widths()
	if m.wide() {
		m.writePanes(&b, h,
			pane{"Chat", m.focus == focusChat, chatW, m.chat.view()},
			pane{"Timeline", m.focus == focusTimeline, tlW, m.tl.view(tlW-2, m.focus == focusTimeline)},
			pane{"Memory", m.focus == focusMemory, memW, m.mem.view(memW-2, m.focus == focusMemory)})
	} else {
		if tabs {
			b.WriteString(m.tabs())
			b.WriteByte('\n')
		}
		var lines []string
		switch m.shown {
		case focusTimeline:
			lines = m.tl.view(m.width-2, m.focus == focusTimeline)
		case focusMemory:
			lines = m.mem.view(m.width-2, m.focus == focusMemory)
		default:
			lines = m.chat.view()
		}
		m.writePanes(&b, h, pane{paneNames[m.shown], m.focus == m.shown, m.width, lines})
	}
	for _, l := range m.inputBox() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(m.statusLine())
	if help != helpNone {
		b.WriteByte('\n')
		b.WriteString(m.helpView(help == helpFull))
	}
	return b.String()
}

func (m *Model) tabs() string {
	var parts []string
	for _, f := range []focus{focusChat, focusTimeline, focusMemory} {
		name := paneNames[f]
		if f == m.shown {
			parts = append(parts, styleFocus.Render("["+name+"]"))
		} else {
			parts = append(parts, " "+name+" ")
		}
	}
	return ansi.Truncate(strings.Join(parts, " ")+styleDim.Render("   tab switches"), m.width, "…")
}

func (m *Model) inputBox() []string {
	w := m.width
	if m.memForm != nil {
		return box("Memory: add or edit a fact (enter saves, esc cancels)", true, w, 2, []string{m.memForm.View(), ""}, false)
	}
	if p := m.pause; p != nil {
		what := fmt.Sprintf("⏸ Paused before deciding (step %d)", p.pending.Step)
		if c := p.pending.ToolCall; c != nil {
			verb := "Paused before calling"
			if p.pending.Approval {
				verb = "Approve calling"
			}
			what = fmt.Sprintf("⏸ %s %s %s (step %d)", verb, flatten(Sanitize(c.Name)), flatten(Sanitize(string(c.Args))), p.pending.Step)
		}
		return box("Paused", true, w, 2, []string{stylePause.Render(what), styleDim.Render(pauseKeys[kindOf(p, m.gate.Stepping())])}, false)
	}
	title := "Input"
	if m.gate.Stepping() {
		title = "Input (step mode)"
	}
	if m.inputCache == nil {
		m.inputCache = box(title, m.focus == focusInput, w, 2, strings.Split(m.input.View(), "\n"), false)
	}
	return m.inputCache
}

// pauseKeys says what each key does in each kind of pause.
var pauseKeys = map[pauseKind]string{
	pausedDecide:          "enter: step · c: run to the end without step pauses · esc: abort the run",
	pausedCall:            "enter: run it · c: run to the end · e: edit · s: skip · n: deny · esc: abort",
	pausedApprove:         "enter/y: approve · e: edit arguments · s: skip · n: deny · esc: abort the run",
	pausedApproveStepping: "enter/y: approve · c: approve, run to the end · e: edit · s: skip · n: deny · esc: abort",
}

// statusLine draws the status line. What must be seen comes first when it
// has to give way: the state and any error or note are kept, the step and
// step mode next; the session id, then the model's name, are cut first, and
// "agentty" goes before them.
func (m *Model) statusLine() string {
	state := m.state
	if m.running && m.pause == nil {
		state = m.spin.View() + " " + state
	}
	id := "-"
	if m.backend != nil {
		id = m.backend.SessionID()
	}
	type seg struct {
		text string
		keep int  // segments with the highest keep give way first
		cut  bool // it may be cut short rather than left out
	}
	segs := []seg{{"agentty", 7, false}, {fmt.Sprintf("step %d", m.sess.Steps), 3, false}, {state, 0, false}}
	switch {
	case m.gate.Stepping() && m.released && m.running:
		segs = append(segs, seg{"step mode from the next run", 4, true})
	case m.gate.Stepping():
		segs = append(segs, seg{"step mode", 4, false})
	}
	if m.cfg.Status != "" {
		segs = append(segs, seg{styleErr.Render(m.cfg.Status), 2, false})
	}
	if m.note != "" {
		segs = append(segs, seg{styleNote.Render(flatten(Sanitize(m.note))), 1, false})
	}
	segs = append(segs, seg{"model " + m.cfg.Model, 5, true}, seg{"session " + id, 6, true})
	const sep = " · "
	width := func() int {
		n := len(sep) * (len(segs) - 1)
		for _, sg := range segs {
			n += ansi.StringWidth(sg.text)
		}
		return n
	}
	for over := width() - m.width; over > 0; over = width() - m.width {
		last := 0 // the segment to give way
		for i, sg := range segs {
			if sg.keep > segs[last].keep {
				last = i
			}
		}
		sg := segs[last]
		if sg.keep < 2 {
			break // only the state and the note are left: the end is cut below
		}
		if w := ansi.StringWidth(sg.text); sg.cut && w-over >= 10 {
			segs[last].text = ansi.Truncate(sg.text, w-over, "…")
			break
		}
		segs = append(segs[:last], segs[last+1:]...)
	}
	parts := make([]string, len(segs))
	for i, sg := range segs {
		parts[i] = sg.text
	}
	return ansi.Truncate(strings.Join(parts, sep), m.width, "…")
}

// helpView draws the help, all keys when full.
func (m *Model) helpView(full bool) string {
	hk := helpKeys{k: m.keys, pause: kindOf(m.pause, m.gate.Stepping()), focus: m.focus, narrow: m.width < wideWidth}
	key := helpKey{pause: hk.pause, full: full, focus: hk.focus, width: m.width}
	slot := 0
	if full {
		slot = 1
	}
	if m.helpCache[slot] != "" && m.helpKey[slot] == key {
		return m.helpCache[slot]
	}
	var v string
	if full {
		v = m.help.FullHelpView(hk.FullHelp())
	} else {
		v = m.help.ShortHelpView(hk.ShortHelp())
	}
	// The help bubble overflows when even its "…" does not fit: cut it.
	lines := strings.Split(v, "\n")
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "…")
	}
	m.helpCache[slot], m.helpKey[slot] = strings.Join(lines, "\n"), key
	return m.helpCache[slot]
}

func (m *Model) detailView() string {
	h := m.height - 3
	lines := m.detail[min(m.detailTop, len(m.detail)):]
	return strings.Join(box("Step details (esc closes, ↑/↓ scroll)", true, m.width, h, lines, false), "\n") + "\n" +
		styleDim.Render(ansi.Truncate(fmt.Sprintf("line %d of %d", m.detailTop+1, len(m.detail)), m.width, "…"))
}

func (m *Model) editorView() string {
	lines := []string{styleDim.Render("Edit the tool call's JSON arguments. ctrl+s: check and continue · esc: cancel")}
	if m.editorErr != "" { // why ctrl+s refused them, above what is to be fixed
		rows := wrapRows("✗ "+flatten(Sanitize(m.editorErr)), max(m.width-2, 1))
		for _, r := range rows[:min(len(rows), 3)] {
			lines = append(lines, styleErr.Render(r))
		}
	}
	lines = append(lines, strings.Split(m.argsEditor.View(), "\n")...)
	return strings.Join(box("Edit arguments", true, m.width, m.height-3, lines, false), "\n") + "\n" + m.statusLine()
}

// box draws lines inside a border titled title: exactly h+2 lines, each
// exactly w cells wide. Lines are cut or padded to fit unless fitted says
// they already are.
func box(title string, focused bool, w, h int, lines []string, fitted bool) []string {
	inner := max(w-2, 1)
	t := " " + title + " "
	if focused {
		t = styleFocus.Render(t)
	} else {
		t = styleTitle.Render(t)
	}
	top := "┌─" + ansi.Truncate(t, inner-1, "…")
	top += strings.Repeat("─", max(w-1-ansi.StringWidth(top), 0)) + "┐"
	out := make([]string, 0, h+2)
	out = append(out, top)
	blank := strings.Repeat(" ", inner)
	for i := range h {
		l := blank
		if i < len(lines) && lines[i] != "" {
			l = lines[i]
			if !fitted {
				l = fit(l, inner)
			}
		}
		out = append(out, "│"+l+"│")
	}
	return append(out, "└"+strings.Repeat("─", inner)+"┘")
}

// pane is a bordered pane of fitted lines.
type pane struct {
	title   string
	focused bool
	width   int
	lines   []string
}

// writePanes writes panes side by side, h lines high inside their borders,
// straight into b: a frame builds no string per pane line.
func (m *Model) writePanes(b *strings.Builder, h int, panes ...pane) {
	for _, p := range panes {
		b.WriteString(m.border(p.title, p.focused, p.width))
	}
	b.WriteByte('\n')
	for i := range h {
		for _, p := range panes {
			b.WriteString("│")
			if i < len(p.lines) && p.lines[i] != "" {
				b.WriteString(p.lines[i])
			} else {
				b.WriteString(m.blank(p.width - 2))
			}
			b.WriteString("│")
		}
		b.WriteByte('\n')
	}
	for _, p := range panes {
		b.WriteString("└")
		b.WriteString(m.rule(p.width - 2))
		b.WriteString("┘")
	}
	b.WriteByte('\n')
}

// Keys of View's caches: plain structs, so a frame formats no key.
type (
	borderKey struct {
		title   string
		focused bool
		width   int
	}
	helpKey struct {
		pause pauseKind
		full  bool
		focus focus
		width int
	}
)

// border returns a pane's top border, made once per title, focus and width.
func (m *Model) border(title string, focused bool, w int) string {
	key := borderKey{title, focused, w}
	if s, ok := m.borders[key]; ok {
		return s
	}
	s := box(title, focused, w, 0, nil, true)[0]
	if m.borders == nil {
		m.borders = map[borderKey]string{}
	}
	m.borders[key] = s
	return s
}

func (m *Model) blank(w int) string {
	if len(m.blanks) != w {
		m.blanks = strings.Repeat(" ", max(w, 0))
	}
	return m.blanks
}

func (m *Model) rule(w int) string {
	return strings.Repeat("─", max(w, 0))
}

// fit cuts or pads l to exactly w cells, on a cell boundary. l is one line
// of sanitized text: a line break in it, which would add a row to the
// frame, becomes a space.
func fit(l string, w int) string {
	if strings.IndexByte(l, '\n') >= 0 {
		l = strings.ReplaceAll(l, "\n", " ")
	}
	return padRight(ansi.Truncate(baseMark(l), w, "…"), w)
}

// baseMark puts a line that begins with a mark of no width of its own (a
// combining accent, a variation selector, a joiner) on the dotted circle
// that such a mark is shown on alone: drawn after a border, it would join
// the border into one wider character and tear the frame.
func baseMark(l string) string {
	i := 0
	for i+1 < len(l) && l[i] == '\x1b' && l[i+1] == '[' { // our styling: CSI … final byte
		j := i + 2
		for j < len(l) && (l[j] < 0x40 || l[j] > 0x7e) {
			j++
		}
		i = j + 1
	}
	if i >= len(l) || l[i] < utf8.RuneSelf {
		return l
	}
	r, n := utf8.DecodeRuneInString(l[i:])
	if ansi.StringWidth(l[i:i+n]) != 0 || r == utf8.RuneError {
		return l
	}
	return l[:i] + "◌" + l[i:]
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
	switch k := msg.String(); k {
	case "ctrl+c", "esc":
		if k == "esc" && m.picker.FilterState() != list.Unfiltered {
			break // esc ends or clears the filter first
		}
		if m.backend == nil {
			return m, tea.Quit // nothing to go back to
		}
		m.picker = nil
		return m, nil
	case "enter":
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

// Run runs the console until the person quits. The terminal is restored on
// exit and on a panic. A panic in Update, View or a command ends the
// program and comes back as a *PanicError, after the run that was going has
// been cancelled with engine.ErrCrashed and drained (for up to 5s), so that
// its run_finished (stop reason error) is journaled.
func Run(m *Model, opts ...tea.ProgramOption) error {
	opts = append([]tea.ProgramOption{tea.WithAltScreen(), tea.WithMouseCellMotion()}, opts...)
	g := &guard{m: m}
	p := tea.NewProgram(g, opts...)
	g.kill = p.Kill
	_, err := p.Run()
	crash := g.crashed()
	if crash == nil && errors.Is(err, tea.ErrProgramPanic) {
		crash = &PanicError{Value: errTeaPanic}
	}
	for _, b := range m.retired { // their commands may not have run
		b.Close()
	}
	if crash != nil {
		m.cancelWith(engine.ErrCrashed)
		m.Drain(5 * time.Second)
		return crash
	}
	m.Cancel()
	m.Drain(5 * time.Second)
	return err
}

// Cancel cancels the run going on, if any.
func (m *Model) Cancel() { m.cancelWith(nil) }

// cancelWith cancels the run going on, if any, with cause (nil:
// context.Canceled).
func (m *Model) cancelWith(cause error) {
	if m.cancel != nil {
		m.cancel(cause)
	}
}

// Drain waits, after the program has ended, for a cancelled run to finish,
// so that its last events (run_finished) reach the journal before it is
// closed. It gives up after timeout.
func (m *Model) Drain(timeout time.Duration) {
	if m.events == nil {
		return
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case _, ok := <-m.events:
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}

// Backend returns the backend of the session the console has open.
func (m *Model) Backend() Backend { return m.backend }
