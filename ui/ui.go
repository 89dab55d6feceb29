// Package ui is agentty's console: a Bubble Tea program with the chat, a
// timeline of every step and the agent's memory side by side, an input
// below, and a status line. The engine runs outside the Bubble Tea loop; its
// events arrive as messages, one per Cmd, and Update and View never block or
// do I/O. Stepping goes through Gate, which hands each pause to the console.
package ui

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"

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
	Interrupted      bool  // its last run has no run_finished, and nobody writes it
	Running          bool  // another agentty writes it now (a run going, or paused)
	Err              error // why it cannot be read in full (damaged)
	// ForkOf and ForkStep name the session it was forked from and the
	// step ("" when it is no fork).
	ForkOf   string
	ForkStep int
	// Elsewhere is the folder of a session last worked on in another
	// ("" for this folder's, or not known); Origin what made it (eval,
	// workflow, console, run).
	Elsewhere, Origin string
	// Age says how long ago it was updated ("5m ago"; "" shows the date).
	Age string
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
	// Search searches the sessions and the workspace's files (ctrl+f,
	// /search); nil: Sessions, when it is a Searcher too, else none.
	Search Searcher
	// Follow, when set, makes the console follow a session read-only
	// (Backend and Sessions are not used); Events are its journal so far.
	Follow *Follow
	// History are the messages sent in this workspace before, oldest
	// first, which ↑ walks; Remember keeps one more (it may do I/O: the
	// console calls it from a command, never from Update).
	History  []string
	Remember func(task string) error
	// Draft is what was left typed in the session's input, back in it.
	Draft string
	// Grace is how long a pause ignores its keys after it is drawn
	// (PauseGrace; grace.go); 0: they act at once.
	Grace time.Duration
}

type focus int

const (
	focusInput focus = iota
	focusChat
	focusTimeline
	focusMemory
)

var paneNames = map[focus]string{focusChat: "Chat", focusTimeline: "Timeline", focusMemory: "Memory"}

// Model is the console's root model.
type Model struct {
	cfg     Config
	backend Backend
	gate    *Gate

	width, height int
	focus         focus
	shown         focus // the pane shown when the terminal is narrow, or zoomed
	zoomed        bool  // one pane has the whole width (ctrl+z, /zoom)

	chat  chat
	tl    timeline
	mem   memory
	clean eventCleaner // makes the events' text safe to draw

	input input
	slash slashList // the list of commands as "/" is typed
	keys  keyMap
	help  helpBar
	spin  spinner.Model

	// sess is the session as the console has seen it: every event goes
	// through its Apply, and memory, usage, steps and "interrupted" are
	// read from it. The console never changes it otherwise.
	sess *engine.Session

	running  bool
	events   <-chan engine.Event
	cancel   context.CancelCauseFunc // cancels the run going on, with a cause
	state    string
	pause    *gateRequest
	pauses   []gateRequest // pauses that came while one was shown, in order
	released bool          // c let this run go on without step pauses

	argsEditor *argsEditor
	// inspector is the request inspector of a decide pause (i); reqs are
	// each run's last two model_request payloads, for its diff.
	inspector *inspector
	reqs      map[string]reqPair
	memForm   *factForm
	detail    *details      // a step's details, over the rest
	rewind    *RewindPlan   // the rewind whose plan detail shows, waiting for a choice
	rewindAsk *rewindChoice // the choice made on it, waiting for a second yes (other sessions' files)
	cpNoted   bool          // what checkpoints do not cover was said
	picker    *picker
	search    *searchView // the search (ctrl+f), over the panes
	jump      *searchJump // the step of the session being opened from the search
	searchSeq int         // numbers the search's commands, so that a late answer is known
	note      string
	noteSeq   int  // numbers the notes, for their expiry (notes.go)
	runNote   bool // the note is of the run going (it goes when the run ends)
	quitting  bool
	armed     string      // the Timeline key (f, b) whose second press acts
	mention   mentionList // the files "@" offers
	// queue holds the tasks sent while a run went on, sent in order as
	// runs end (queue.go); queueShown is how many the input box shows.
	queue      []string
	queueShown int
	queueHeld  bool   // ctrl+c cancelled the run: the queue waits for enter
	opening    bool   // a session is being opened from the picker
	saving     int    // memory edits sent to the backend and not back yet
	commanding int    // slash commands sent to the backend and not back yet
	model      string // the model of the next runs, as the status line says
	wf         workflowState
	wfNames    []string  // the workflows, for completing /workflow NAME
	retired    []Backend // sessions switched away from, closed by a command
	// remote holds, in a followed session, the tool call (by id, "" for
	// a decide) of each run's last gate_paused not yet resumed: its
	// gate_resumed names the pause it ends by run, step and phase only.
	remote map[string]string
	out    copyOut // the clipboard (OSC 52) and the mouse (copy.go)

	now func() time.Time // a test's clock (grace.go); nil: time.Now

	// Caches of what View drew, for the parts that change rarely.
	inputCache []string
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
	if s, ok := cfg.Sessions.(Searcher); ok && cfg.Search == nil {
		cfg.Search = s
	}
	cfg.Notice, cfg.Status, cfg.Model = Sanitize(cfg.Notice), flatten(Sanitize(cfg.Status)), flatten(Sanitize(cfg.Model))
	in := textarea.New()
	in.Placeholder = askPlaceholder
	in.ShowLineNumbers = false
	in.Prompt = ""
	in.SetHeight(2)
	in.CharLimit = 0
	keys := newKeyMap()
	in.KeyMap.InsertNewline = keys.Newline
	in.KeyMap.CharacterForward = key.NewBinding(key.WithKeys("right")) // ctrl+f searches
	in.Focus()
	sp := spinner.New()
	sp.Spinner = spinner.Dot
	m := &Model{
		cfg: cfg, gate: cfg.Gate, input: input{Model: in}, keys: keys, help: helpBar{Model: help.New()}, spin: sp,
		chat: newChat(cfg.Style), tl: newTimeline(), state: "idle", shown: focusChat, width: 120, height: 40,
	}
	if cfg.Follow != nil {
		m.setFollow(cfg.Follow)
	}
	m.setBackend(m.cfg.Backend, cfg.Events)
	m.input.history = append([]string(nil), cfg.History...)
	m.input.histIdx = len(m.input.history)
	if cfg.Draft != "" {
		m.input.SetValue(cfg.Draft)
	}
	if cfg.Notice != "" {
		m.chat.add(&chatItem{kind: itemNote, text: cfg.Notice})
	}
	m.layout()
	m.growInput()
	return m
}

// Draft is what is left typed in the input (for the next time the session
// is opened).
func (m *Model) Draft() string { return m.input.Value() }

// remember keeps a sent message in the workspace's history, off the
// Bubble Tea loop; a failure is not worth a word.
func (m *Model) remember(task string) tea.Cmd {
	if m.cfg.Remember == nil || task == "" {
		return nil
	}
	f := m.cfg.Remember
	return func() tea.Msg {
		f(task)
		return nil
	}
}

// askPlaceholder is the input's text while it is empty.
const askPlaceholder = "Ask the agent… (enter sends, alt+enter for a new line)"

// setBackend switches the console to a session and rebuilds the panes from
// its journaled events.
func (m *Model) setBackend(b Backend, events []engine.Event) {
	m.backend, m.note = b, "" // a note was of the session left
	m.reqs = nil
	id := ""
	if b != nil {
		id = b.SessionID()
	}
	m.sess = engine.NewSession(id)
	m.model = m.cfg.Model
	m.chat = newChat(m.cfg.Style)
	if o, ok := b.(ArgOrderer); ok {
		m.chat.argOrder = o.ArgOrder
	}
	m.tl = newTimeline()
	m.tl.reserve(len(events))
	m.mem = memory{sess: m.sess}
	m.clean.reset()
	m.wf = workflowState{}
	for _, ev := range events {
		m.applyEvent(ev)
	}
	if c, ok := b.(Commander); ok {
		if name := flatten(Sanitize(c.ModelName())); name != "" {
			m.model = name // the journal says what ran; the backend, what runs next
		}
	}
	ro, _ := b.(interface{ ReadOnly() string })
	if !m.following() {
		m.input.Placeholder = askPlaceholder
		if ro != nil && ro.ReadOnly() != "" {
			m.input.Placeholder = "Read-only: " + flatten(Sanitize(ro.ReadOnly())) + " (ctrl+o opens another session; / for commands)"
		}
	}
	switch {
	case !m.sess.Interrupted() || m.following(): // a followed run goes on elsewhere
	case ro != nil && ro.ReadOnly() != "":
		// Another agentty has the session: its last run may be going on
		// there, not interrupted.
		m.chat.add(&chatItem{kind: itemNote, text: "The last run has not finished here; it may be going on in the agentty that has the session open (with NATS, agentty watch " + Sanitize(b.SessionID()) + " follows it live)."})
	default:
		m.tl.interrupt()
		m.chat.add(&chatItem{kind: itemNote, text: "The last run was interrupted. Press ctrl+r to continue it, or send a new task."})
	}
	last := m.state
	m.state = "idle"
	if m.following() && m.sess.Interrupted() {
		m.state = "running" // its journal ends mid-run: the run goes on where it runs
		if last == "paused" {
			m.state = "paused" // it waits at a pause, for whoever may answer it
		}
	}
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
	if m.following() {
		cmds = append(cmds, waitForFollow(m.cfg.Follow.Events))
	}
	if w, ok := m.backend.(Workflows); ok {
		cmds = append(cmds, listWorkflows(w))
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

// Update handles one message. It never blocks and does no I/O. A note it
// leaves in the status line goes after a while (notes.go).
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if e, ok := msg.(noteExpiredMsg); ok {
		m.noteExpired(e)
		return m, nil
	}
	before := m.note
	next, cmd := m.update(msg)
	return next, tea.Batch(cmd, m.noteChanged(before))
}

// update is Update, but for the notes' expiry.
func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg.(type) {
	case engineEventMsg, spinner.TickMsg, runClosedMsg, followEventMsg:
	default:
		m.inputCache = nil // keys, blinks, sizes and pauses change the input box
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		m.growInput() // its rows are a third of the height at most
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
	case followEventMsg, followEndedMsg:
		return m, m.followed(msg)
	case runClosedMsg:
		return m, m.runClosed(msg)
	case armMsg: // the pause's keys act now: its bar says so
		m.layout()
		return m, nil
	case gateMsg:
		return m, m.gated(msg)
	case listedMsg:
		m.openPicker(msg.list, msg.err)
		return m, nil
	case workflowsListedMsg:
		m.wfNames = msg.names
		return m, nil
	case attachedMsg:
		return m, m.attached(msg)
	case openedMsg:
		return m, m.opened(msg)
	case searchedMsg:
		m.searched(msg)
		return m, nil
	case indexedMsg:
		return m, m.indexed(msg)
	case commandDoneMsg:
		return m, m.commandDone(msg)
	case clipDoneMsg:
		m.clipDone(msg)
		return m, nil
	case closedMsg:
		if msg.err != nil {
			m.note = msg.err.Error()
		}
		return m, nil
	case memoryChangedMsg:
		return m.memoryChanged(msg)
	case spinner.TickMsg:
		if !m.running || m.pause != nil {
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	case tea.MouseMsg:
		return m.mouse(msg)
	case tea.KeyMsg:
		if msg.Type == tea.KeyEsc && msg.Alt { // two esc presses in one read
			_, first := m.key(tea.KeyMsg{Type: tea.KeyEsc})
			_, second := m.key(tea.KeyMsg{Type: tea.KeyEsc})
			return m, tea.Batch(first, second)
		}
		return m.key(asText(msg))
	}
	return m, m.otherMsg(msg)
}

// asText marks a burst of characters (several in one read: typed over SSH
// or mosh, dictated, pasted without bracketed paste) as the text it is.
// Bubble Tea v1 hands a burst over as one key whose String() is the text
// ("enter", "up", "tab"), and bindings match by String(): a pasted key's
// is bracketed, so no binding matches it, and text fields take it whole.
func asText(msg tea.KeyMsg) tea.KeyMsg {
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 {
		msg.Paste = true
	}
	return msg
}

// otherMsg hands a message the console does not take itself to what is in
// front: the search's query or the picker (their blinks, the filter's
// matches, a status timeout), else the input.
func (m *Model) otherMsg(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	if fl, ok := msg.(filesListedMsg); ok { // for "@"
		m.mention.files, m.mention.matched = fl.files, false
		return nil
	}
	switch {
	case m.search != nil && m.picker == nil:
		m.search.input, cmd = m.search.input.Update(msg)
	case m.picker != nil:
		_, _, cmd = m.picker.update(msg, m.keys)
	case m.focus == focusInput:
		m.input.Model, cmd = m.input.Model.Update(msg)
	}
	return cmd
}

// noteCancelling is the status line's note from ctrl+c until the run ends.
const noteCancelling = "cancelling… (ctrl+c again quits)"
