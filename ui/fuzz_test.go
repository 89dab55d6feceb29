package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// FuzzConsole drives the console as a person and an engine would, in any
// order: keys (every key the help lists, and more), typed and pasted text,
// the mouse, window sizes from 20×8 to 300×100, and the events of real
// journals (streamed answers, tool calls, retries, pauses, memory changes,
// trimming, errors, cancels), in every state (empty, streaming, paused,
// editing, the picker, the details, the help, a read-only or damaged
// session). After every step the frame must have exactly the terminal's
// height in lines, none wider than the terminal; nothing may panic; and at
// the end every session's journal must still read back whole.
//
// The commands Update returns are run as Bubble Tea would where their
// message comes at once (see instantCmds); a run's events and the gate's
// pauses are sent on their channels and read by the commands that wait for
// them, so a run the console stops listening to is caught too.
//
// Seeds are in testdata/fuzz/FuzzConsole; AGENTTY_WRITE_SEEDS=1 go test -run
// TestWriteConsoleSeeds ./ui rewrites them from consoleSeeds.
func FuzzConsole(f *testing.F) {
	journals := loadJournals(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		h := newHarness(t, journals, data)
		defer h.close()
		h.play()
	})
}

// journal is a recorded session from testdata/journals.
type journal struct {
	name    string
	events  []engine.Event
	corrupt string // why it cannot be written ("" when it can)
}

func loadJournals(tb testing.TB) []journal {
	paths, err := filepath.Glob(filepath.Join("testdata", "journals", "*.jsonl"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no journals in testdata/journals: %v", err)
	}
	slices.Sort(paths)
	var js []journal
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		l := sessions.Read(b, p, "0mx2fuzz0001")
		j := journal{name: filepath.Base(p), events: l.Events}
		if l.Corrupt != nil {
			j.corrupt = l.Corrupt.Error()
		}
		js = append(js, j)
	}
	return js
}

// fuzzBackend journals into memory what a run sends the console, applying
// each event to a session first as the engine does (an event the session
// refuses is one no engine could send, and is not sent).
type fuzzBackend struct {
	id       string
	readOnly string // why it is read-only ("" when it is not)
	s        *engine.Session
	journal  []byte
	n        int // events journaled
	h        *harness
}

func (b *fuzzBackend) emit(ev engine.Event) error {
	if err := b.s.Apply(ev); err != nil {
		return err
	}
	var err error
	if b.journal, err = ev.AppendJSON(b.journal); err != nil {
		b.h.t.Fatalf("journal: %v", err)
	}
	b.journal = append(b.journal, '\n')
	b.n++
	return nil
}

func (b *fuzzBackend) Start(ctx context.Context, task string) <-chan engine.Event {
	if b.readOnly != "" { // as the console's read-only backend refuses
		ch := make(chan engine.Event, 1)
		ch <- engine.Event{V: engine.SchemaVersion, Session: b.id, Kind: engine.KindRunFinished, Time: time.Now(),
			Data: &engine.RunFinished{StopReason: engine.StopError, Error: "this session is read-only: " + b.readOnly}}
		close(ch)
		b.h.trace("backend refuses the run")
		return ch
	}
	r := &fuzzRun{b: b, ch: make(chan engine.Event, 1), ctx: ctx, task: task}
	if b.h.run != nil && !b.h.run.closed {
		b.h.t.Fatalf("a run started while another is going")
	}
	b.h.run = r
	b.h.trace("backend starts a run")
	return r.ch
}

func (b *fuzzBackend) Continue(ctx context.Context) <-chan engine.Event { return b.Start(ctx, "") }

func (b *fuzzBackend) ChangeMemory(c engine.MemoryChanged) (engine.Event, error) {
	if b.readOnly != "" {
		return engine.Event{}, errors.New("this session is read-only: " + b.readOnly)
	}
	return b.s.ChangeMemory(c, engine.SinkFunc(func(ev engine.Event) error {
		var err error
		if b.journal, err = ev.AppendJSON(b.journal); err != nil {
			return err
		}
		b.journal = append(b.journal, '\n')
		b.n++
		return nil
	}))
}

func (b *fuzzBackend) SessionID() string { return b.id }
func (b *fuzzBackend) Close() error      { return nil }

var _ Backend = (*fuzzBackend)(nil)

// fuzzRun is a run the harness plays: the events of a journal, then
// run_finished, then the channel closes. A cancelled run finishes at once.
type fuzzRun struct {
	b        *fuzzBackend
	ch       chan engine.Event
	ctx      context.Context
	task     string
	cursor   int            // next event of the harness's journal
	queue    []engine.Event // sent before the journal's next
	finished bool           // run_finished sent
	closed   bool
	gate     *gateRequest // a pause the person has not answered
}

// fuzzSessions is the picker's store: listings chosen by the input, and
// sessions that open on a journal (or fail to).
type fuzzSessions struct {
	h    *harness
	list []sessions.Listing
	err  error
}

func (s *fuzzSessions) List() ([]sessions.Listing, error) { return s.list, s.err }

func (s *fuzzSessions) Open(id string) (Backend, []engine.Event, error) {
	i := 0
	for _, c := range id {
		i += int(c)
	}
	if i%7 == 0 {
		return nil, nil, fmt.Errorf("sessions: %s: %w", id, sessions.ErrLocked)
	}
	j := s.h.journals[i%len(s.h.journals)]
	return s.h.newBackend(id, j, len(j.events)), j.events, nil
}

// harness holds one input's console and what stands in for the engine.
type harness struct {
	t        *testing.T
	journals []journal
	in       []byte
	m        *Model
	w, h     int
	backends []*fuzzBackend
	run      *fuzzRun
	playing  int // which journal runs play
	waiters  []tea.Cmd
	gates    []tea.Cmd
	log      []string
}

func newHarness(t *testing.T, journals []journal, data []byte) *harness {
	return &harness{t: t, journals: journals, in: data}
}

func (h *harness) trace(format string, a ...any) {
	h.log = append(h.log, fmt.Sprintf(format, a...))
}

func (h *harness) byte() byte {
	if len(h.in) == 0 {
		return 0
	}
	c := h.in[0]
	h.in = h.in[1:]
	return c
}

func (h *harness) pick(n int) int { return int(h.byte()) % n }

func (h *harness) newBackend(id string, j journal, upTo int) *fuzzBackend {
	b := &fuzzBackend{id: id, s: engine.NewSession(id), h: h, readOnly: j.corrupt}
	for _, ev := range j.events[:upTo] {
		if err := b.emit(ev); err != nil {
			h.t.Fatalf("journal %s does not replay: %v", j.name, err)
		}
	}
	h.backends = append(h.backends, b)
	return b
}

// The keys the help lists, and others a person presses.
var fuzzKeys = func() []tea.KeyMsg {
	var ks []tea.KeyMsg
	seen := map[string]bool{}
	add := func(k tea.KeyMsg) {
		if !seen[k.String()] {
			seen[k.String()] = true
			ks = append(ks, k)
		}
	}
	for _, name := range []string{
		"enter", "alt+enter", "ctrl+j", "up", "down", "left", "right", "tab", "shift+tab", "pgup", "pgdown",
		"home", "end", "esc", "backspace", "delete", "ctrl+c", "ctrl+d", "ctrl+t", "ctrl+o", "ctrl+r",
		"ctrl+x", "ctrl+s", "ctrl+a", "ctrl+e", "ctrl+k", "ctrl+u", "ctrl+w", " ",
		"?", "/", "q", "g", "G", "j", "k", "a", "e", "d", "c", "y", "s", "n", "x", "1", "=",
	} {
		add(keyNamed(name))
	}
	km := newKeyMap()
	hk := helpKeys{k: km}
	for _, col := range hk.FullHelp() {
		for _, b := range col {
			for _, k := range b.Keys() {
				add(keyNamed(k))
			}
		}
	}
	return ks
}()

// keyNamed makes the key message whose String is name.
func keyNamed(name string) tea.KeyMsg {
	alt := false
	if rest, ok := strings.CutPrefix(name, "alt+"); ok {
		alt, name = true, rest
	}
	for t := tea.KeyType(-1); t > -200; t-- { // the special keys
		if (tea.Key{Type: t}).String() == name {
			return tea.KeyMsg{Type: t, Alt: alt}
		}
	}
	for t := tea.KeyType(0); t < 128; t++ { // the control keys
		if (tea.Key{Type: t}).String() == name {
			return tea.KeyMsg{Type: t, Alt: alt}
		}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(name), Alt: alt}
}

// Text that has broken terminals: tabs, escapes, carriage returns, wide
// and zero-width characters, long words, Markdown.
var fuzzTexts = []string{
	"hello",
	"func main() {\n\tfmt.Println(\"hi\")\n}",
	"```go\nfunc f() {\n\treturn\n}\n```",
	"title \x1b]0;pwned\x07 clear \x1b[2J cr\roverwrite",
	"中文句子很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长 🎉👍🏽",
	"https://example.com/" + strings.Repeat("a", 200),
	"e\u0301 zero\u200bwidth \u202eright-to-left",
	"# Title\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |",
	strings.Repeat("word ", 80),
	"\x00\x01\x7f\u0085\u009b31m",
	"line\n\n\n\nline",
	"",
}

var fuzzRunes = []rune{'\t', '\r', '\n', 0x1b, 0x7f, 0x9b, 'é', '中', '🎉', 0x200b, 0x301, 0xfe0f, '│', 'ﷺ', utf8.RuneError}

func (h *harness) text() string {
	n := h.pick(len(fuzzTexts) + 1)
	if n < len(fuzzTexts) {
		return fuzzTexts[n]
	}
	return string(h.runes(h.pick(64) + 1))
}

func (h *harness) runes(n int) []rune {
	rs := make([]rune, 0, n)
	for range n {
		c := h.byte()
		if c < 0x80 {
			rs = append(rs, rune(c))
		} else {
			rs = append(rs, fuzzRunes[int(c)%len(fuzzRunes)])
		}
	}
	return rs
}

// Operations of the input, one byte each and their arguments after.
const (
	opKey = iota
	opRunes
	opPaste
	opMouse
	opResize
	opEngine      // the run goes one event on
	opEngineBurst // the run goes on several events
	opEvent       // an event made up from the input
	opJournal     // runs play another journal from its start
	opPause       // the gate pauses the run
	opOther       // messages of the terminal and the timers
	opCount
)

// Start states.
const (
	startNew = iota
	startOffline
	startResumed
	startReadOnly
	startPicker
	startStep
	startCount
)

func (h *harness) play() {
	defer func() {
		if r := recover(); r != nil {
			h.t.Fatalf("panic: %v\n%s\nafter:\n  %s", r, debug.Stack(), strings.Join(h.log, "\n  "))
		}
	}()
	start := h.pick(startCount)
	h.playing = h.pick(len(h.journals))
	cfg := Config{Style: "notty", Model: "fuzz", Gate: NewGate(start == startStep)}
	list := h.listing()
	cfg.Sessions = list
	j := h.journals[h.playing]
	switch start {
	case startNew, startStep:
		cfg.Backend = h.newBackend("0mx2fuzz0001", journal{}, 0)
	case startOffline:
		cfg.Backend = h.newBackend("0mx2fuzz0001", journal{}, 0)
		cfg.Notice = "Using the built-in offline model: no key and no server are configured."
	case startResumed:
		upTo := h.pick(len(j.events) + 1)
		cfg.Backend, cfg.Events = h.newBackend("0mx2fuzz0001", j, upTo), j.events[:upTo]
	case startReadOnly:
		for _, d := range h.journals {
			if d.corrupt != "" {
				j = d
			}
		}
		b := h.newBackend("0mx2fuzz0001", j, len(j.events))
		b.readOnly = cmp(j.corrupt, "session 0mx2fuzz0001 is open in another agentty")
		cfg.Backend, cfg.Events = b, j.events
		cfg.Notice = "Read-only: " + b.readOnly + ". Nothing can be added to this session here; ctrl+o opens another."
	}
	if h.pick(4) == 0 {
		cfg.Status = "MCP down: files"
	}
	h.trace("start %d with journal %s", start, j.name)
	h.m = New(cfg)
	h.resize()
	h.settle(h.m.Init())
	h.check("start")
	for ops := 0; len(h.in) > 0 && ops < 400; ops++ {
		h.step()
	}
	h.verifyJournals()
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// listing chooses the sessions the picker lists.
func (h *harness) listing() *fuzzSessions {
	s := &fuzzSessions{h: h}
	n := []int{0, 1, 3, 300}[h.pick(4)]
	for i := range n {
		l := sessions.Listing{Meta: sessions.Meta{ID: fmt.Sprintf("0mx2list%04d", i), Title: fuzzTexts[i%len(fuzzTexts)],
			Model: "offline", LastStep: i, Interrupted: i%3 == 1, Updated: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}}
		if i%5 == 2 {
			l.Err = errors.New("line 3 is corrupt")
		}
		s.list = append(s.list, l)
	}
	if h.pick(8) == 0 {
		s.err = errors.New("sessions: permission denied")
	}
	return s
}

func (h *harness) resize() {
	h.w, h.h = 20+h.pick(281), 8+h.pick(93)
	h.trace("resize %dx%d", h.w, h.h)
	h.update(tea.WindowSizeMsg{Width: h.w, Height: h.h})
}

func (h *harness) step() {
	switch op := h.pick(opCount); op {
	case opKey:
		k := fuzzKeys[h.pick(len(fuzzKeys))]
		h.trace("key %s", k)
		h.update(k)
	case opRunes:
		k := tea.KeyMsg{Type: tea.KeyRunes, Runes: h.runes(h.pick(16) + 1)}
		h.trace("runes %q", string(k.Runes))
		h.update(k)
	case opPaste:
		k := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(h.text()), Paste: true}
		h.trace("paste %q", string(k.Runes))
		h.update(k)
	case opMouse:
		c := h.byte()
		msg := tea.MouseMsg{X: h.pick(h.w + 5), Y: h.pick(h.h + 5)}
		msg.Action = []tea.MouseAction{tea.MouseActionPress, tea.MouseActionRelease, tea.MouseActionMotion}[int(c)%3]
		msg.Button = []tea.MouseButton{tea.MouseButtonWheelUp, tea.MouseButtonWheelDown, tea.MouseButtonLeft,
			tea.MouseButtonRight, tea.MouseButtonNone, tea.MouseButtonWheelLeft}[int(c/3)%6]
		h.trace("mouse %s", msg)
		h.update(msg)
	case opResize:
		h.resize()
	case opEngine:
		h.engineStep()
	case opEngineBurst:
		for range h.pick(32) + 1 {
			h.engineStep()
		}
	case opEvent:
		h.madeUpEvent()
	case opJournal:
		h.playing = h.pick(len(h.journals))
		h.trace("journal %s", h.journals[h.playing].name)
		if h.run != nil {
			h.run.cursor = 0
		}
	case opPause:
		h.pause()
	case opOther:
		msgs := []tea.Msg{tea.FocusMsg{}, tea.BlurMsg{}, h.m.spin.Tick(), struct{}{}, tea.QuitMsg{}, nil}
		msg := msgs[h.pick(len(msgs))]
		h.trace("message %T", msg)
		h.update(msg)
	}
	h.answered()
	h.check(h.log[len(h.log)-1])
}

// update feeds msg to the console and runs what follows from it.
func (h *harness) update(msg tea.Msg) {
	_, cmd := h.m.Update(msg)
	h.settle(cmd)
}

// settle runs the commands whose message comes at once, feeding their
// messages back, and keeps those that wait for a run or the gate.
func (h *harness) settle(cmd tea.Cmd) {
	queue := []tea.Cmd{cmd}
	for fed := 0; len(queue) > 0 && fed < 64; {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch {
		case cmdIs(c, "waitForEvent.func"):
			h.waiters = append(h.waiters, c)
			continue
		case cmdIs(c, "waitForGate.func"):
			h.gates = append(h.gates, c)
			continue
		case cmdIs(c, "bubbles/spinner.Model.Tick"): // the first tick comes at once
		case !instantCmd(c):
			continue
		}
		msg := c()
		if b, ok := msg.(tea.BatchMsg); ok {
			queue = append(queue, b...)
			continue
		}
		_, next := h.m.Update(msg)
		fed++
		queue = append(queue, next)
	}
}

// deliver sends ev on the run's channel and lets the console's waiting
// command read it.
func (h *harness) deliver(ev engine.Event) {
	r := h.run
	if len(h.waiters) == 0 {
		h.t.Fatalf("a run is going but the console does not wait for its events\nafter:\n  %s", strings.Join(h.log, "\n  "))
	}
	r.ch <- ev
	for len(r.ch) > 0 {
		w := h.waiters[0]
		h.waiters = h.waiters[1:]
		h.update(w()) // a waiter on an older, closed run returns at once
		if len(r.ch) > 0 && len(h.waiters) == 0 {
			h.t.Fatalf("the console stopped waiting for the run's events\nafter:\n  %s", strings.Join(h.log, "\n  "))
		}
	}
}

// closeRun closes the run's channel and lets the console see it.
func (h *harness) closeRun() {
	r := h.run
	close(r.ch)
	r.closed = true
	h.run = nil
	for len(h.waiters) > 0 {
		w := h.waiters[0]
		h.waiters = h.waiters[1:]
		h.update(w())
	}
}

// engineStep moves the run on as the engine would: a cancelled run
// finishes, a paused one waits, a finished one closes its channel.
func (h *harness) engineStep() {
	r := h.run
	if r == nil {
		// Every run's channel is closed (or, read-only, holds its refusal):
		// what waits on one returns at once.
		h.trace("engine: no run going")
		if len(h.waiters) > 0 {
			w := h.waiters[0]
			h.waiters = h.waiters[1:]
			h.update(w())
		}
		return
	}
	switch {
	case r.finished:
		h.trace("engine: run closes")
		h.closeRun()
	case r.ctx.Err() != nil:
		r.gate = nil // the gate gives up with the run's context
		reason := engine.StopCancelled
		if errors.Is(context.Cause(r.ctx), engine.ErrCrashed) {
			reason = engine.StopError
		}
		h.trace("engine: run cancelled")
		h.finish(engine.RunFinished{StopReason: reason, Error: "context canceled"})
	case r.gate != nil:
		h.trace("engine: waits at the gate")
	case len(r.queue) > 0:
		ev := r.queue[0]
		r.queue = r.queue[1:]
		h.send(ev)
	default:
		j := h.journals[h.playing]
		for r.cursor < len(j.events) {
			ev := j.events[r.cursor]
			r.cursor++
			if ev.Kind == engine.KindRunStarted && r.cursor > 1 {
				break // the journal's next run: this run ends here
			}
			if h.send(ev) {
				return
			}
		}
		h.finish(engine.RunFinished{StopReason: engine.StopAnswered})
	}
}

// send journals ev and delivers it, unless the session refuses it (an
// event no engine could send here); it reports whether it was sent.
func (h *harness) send(ev engine.Event) bool {
	r := h.run
	if err := r.b.emit(ev); err != nil {
		h.trace("engine: skips %s (%v)", ev.Kind, err)
		return false
	}
	h.trace("engine: %s", ev.Kind)
	h.deliver(ev)
	if ev.Kind == engine.KindRunFinished {
		r.finished = true
	}
	return true
}

func (h *harness) finish(d engine.RunFinished) {
	h.send(engine.Event{V: engine.SchemaVersion, Session: h.run.b.id, Kind: engine.KindRunFinished, Time: time.Now(), Data: &d})
}

// madeUpEvent sends an event the journals may not have: text in any
// shape, retries, memory changes, errors, kinds unknown to this version.
func (h *harness) madeUpEvent() {
	step := h.pick(5)
	ev := engine.Event{V: engine.SchemaVersion, Session: "0mx2fuzz0001", Run: "run-9", Step: step, Time: time.Now()}
	switch h.pick(9) {
	case 0, 1:
		ev.Kind, ev.Data = engine.KindTextDelta, &engine.TextDelta{Text: h.text(), Reasoning: h.pick(4) == 0, Attempt: 1}
	case 2:
		ev.Kind, ev.Data = engine.KindRetry, &engine.RetryData{Op: []string{"model", "tool"}[h.pick(2)], Attempt: 2, Cause: h.text()}
	case 3:
		ev.Kind, ev.Data = engine.KindMemoryChanged, &engine.MemoryChanged{Op: []string{engine.MemorySet, engine.MemoryDelete}[h.pick(2)],
			Key: []string{"city", "name", "k"}[h.pick(3)], Value: h.text(), Source: "tool"}
	case 4:
		ev.Kind, ev.Data = engine.KindDecision, &engine.DecisionData{Text: h.text(), Attempts: 1}
	case 5:
		ev.Kind, ev.Data = engine.KindRunFinished, &engine.RunFinished{StopReason: []engine.StopReason{engine.StopAnswered,
			engine.StopError, engine.StopCancelled, engine.StopStepLimit}[h.pick(4)], Error: h.text()}
	case 6:
		ev.Kind, ev.Data = engine.Kind("future_kind"), json.RawMessage(`{"x":1}`)
	case 7:
		ev.Kind, ev.Data = engine.KindNotice, &engine.Notice{Level: "warn", Message: h.text()}
	case 8:
		ev.Kind, ev.Data = engine.KindStepStarted, &engine.StepStarted{Turn: step}
	}
	if h.run != nil && !h.run.finished && h.run.gate == nil {
		h.run.queue = append(h.run.queue, ev)
		h.trace("engine will send %s", ev.Kind)
		return
	}
	if h.run == nil && h.m.events == nil { // no run: as a journal's event on resume
		if b, ok := h.m.backend.(*fuzzBackend); ok && b.emit(ev) != nil {
			return
		}
		h.trace("event %s outside a run", ev.Kind)
		h.update(engineEventMsg{ev})
	}
}

// pause has the gate pause the run, before a decision or a tool call.
func (h *harness) pause() {
	r := h.run
	kind := h.pick(3)
	if r == nil || r.finished || r.gate != nil || r.ctx.Err() != nil {
		h.trace("gate: no run to pause")
		return
	}
	p := engine.Pending{At: engine.Decide, Step: r.b.s.Steps + 1}
	if kind > 0 {
		p.At, p.Approval = engine.Act, kind == 2
		p.ToolCall = &engine.ToolCall{ID: "call_9", Name: "write_file", Args: json.RawMessage(`{"path":"a.txt","content":"` + strings.Repeat("x", h.pick(300)) + `"}`)}
	}
	h.trace("gate: pause %s", p.At)
	h.send(engine.Event{V: engine.SchemaVersion, Session: r.b.id, Run: "run-9", Step: p.Step, Phase: p.At, Kind: engine.KindGatePaused,
		Time: time.Now(), Data: &engine.GatePaused{At: p.At, ToolCall: p.ToolCall, Reason: map[bool]string{true: "approval", false: "step"}[p.Approval]}})
	if len(h.gates) == 0 {
		h.t.Fatalf("the console does not wait for the gate\nafter:\n  %s", strings.Join(h.log, "\n  "))
	}
	req := gateRequest{pending: p, reply: make(chan engine.Verdict, 1)}
	r.gate = &req
	var wg sync.WaitGroup
	wg.Go(func() { h.m.gate.requests <- req })
	w := h.gates[0]
	h.gates = h.gates[1:]
	msg := w()
	wg.Wait()
	h.update(msg)
}

// answered resumes the run when the person has answered the gate.
func (h *harness) answered() {
	r := h.run
	if r == nil || r.gate == nil {
		return
	}
	select {
	case v := <-r.gate.reply:
		r.gate = nil
		h.trace("gate: resumed (%s)", v.Action)
		r.queue = append([]engine.Event{{V: engine.SchemaVersion, Session: r.b.id, Run: "run-9", Kind: engine.KindGateResumed,
			Time: time.Now(), Data: &engine.GateResumed{Action: v.Action, Args: v.Args}}}, r.queue...)
		if v.Action == engine.Abort {
			r.queue = append(r.queue[:1], engine.Event{V: engine.SchemaVersion, Session: r.b.id, Kind: engine.KindRunFinished,
				Time: time.Now(), Data: &engine.RunFinished{StopReason: engine.StopCancelled, Error: "aborted"}})
		}
	default:
	}
}

// check draws the frame and checks its shape.
func (h *harness) check(after string) {
	frame := h.m.View()
	lines := strings.Split(frame, "\n")
	bad := ""
	if len(lines) != h.h {
		bad = fmt.Sprintf("the frame has %d lines, want %d", len(lines), h.h)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > h.w && bad == "" {
			bad = fmt.Sprintf("line %d is %d cells wide, the terminal %d: %q", i+1, w, h.w, ansi.Strip(l))
		}
	}
	if bad != "" {
		h.t.Fatalf("%s at %dx%d after %s\nframe:\n%s\nafter:\n  %s", bad, h.w, h.h, after, frame, strings.Join(h.log, "\n  "))
	}
}

// verifyJournals reads every live session's journal back.
func (h *harness) verifyJournals() {
	for _, b := range h.backends {
		if b.readOnly != "" {
			continue
		}
		l := sessions.Read(b.journal, b.id, b.id)
		if l.Corrupt != nil {
			h.t.Fatalf("session %s's journal does not read back: %v", b.id, l.Corrupt)
		}
		if len(l.Events) != b.n {
			h.t.Fatalf("session %s's journal has %d events, want %d", b.id, len(l.Events), b.n)
		}
		if b == h.m.backend {
			var ui, disk []string
			for _, f := range h.m.mem.facts {
				ui = append(ui, f.Key+"="+f.Value)
			}
			for _, f := range l.Session.Memory() { // the console shows it made safe
				disk = append(disk, Sanitize(f.Key)+"="+Sanitize(f.Value))
			}
			if !slices.Equal(ui, disk) {
				h.t.Fatalf("the Memory pane shows %q, the journal %q\nafter:\n  %s", ui, disk, strings.Join(h.log, "\n  "))
			}
		}
	}
}

// close ends what is still going: a gate the console holds, a run.
func (h *harness) close() {
	if h.run != nil && !h.run.closed {
		close(h.run.ch)
	}
}
