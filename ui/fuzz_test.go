package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentty/agentty/engine"
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
		events, _, corrupt := readJournal(b, p, "0mx2fuzz0001")
		j := journal{name: filepath.Base(p), events: events}
		if corrupt != nil {
			j.corrupt = corrupt.Error()
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
	if ev.Kind == engine.KindTextDelta {
		return nil // passed on, not journaled: the decision holds the text
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

var (
	_ Backend   = (*fuzzBackend)(nil)
	_ Commander = (*fuzzBackend)(nil)
)

// The slash commands: a compaction goes as a run of its own (its events,
// then the channel closes); the rest answer at once, as the real
// backend's would, a read-only session refusing.
func (b *fuzzBackend) Compact(ctx context.Context, focus string) <-chan engine.Event {
	r := &fuzzRun{b: b, ch: make(chan engine.Event, 1), ctx: ctx, compact: true}
	ev := engine.Event{V: engine.SchemaVersion, Session: b.id, Run: b.s.LastRun().ID, Step: b.s.Steps, Phase: engine.Perceive, Time: time.Now()}
	if n := len(b.s.History); n > 1 && b.readOnly == "" {
		ev.Kind, ev.Data = engine.KindContextCompacted, &engine.ContextCompacted{Summary: b.h.text(), Upto: n - 1, Messages: n - 1,
			TokensBefore: 9100, TokensAfter: 2300, Model: "fuzz", Focus: focus, Manual: true}
	} else {
		ev.Kind, ev.Data = engine.KindNotice, &engine.Notice{Level: "warning", Message: "/compact: nothing to compact"}
	}
	r.queue = append(r.queue, ev)
	if b.h.run != nil && !b.h.run.closed {
		b.h.t.Fatalf("a compaction started while a run is going")
	}
	b.h.run = r
	b.h.trace("backend starts a compaction")
	return r.ch
}

func (b *fuzzBackend) sink() engine.Sink {
	return engine.SinkFunc(func(ev engine.Event) error {
		var err error
		if b.journal, err = ev.AppendJSON(b.journal); err != nil {
			return err
		}
		b.journal = append(b.journal, '\n')
		b.n++
		return nil
	})
}

func (b *fuzzBackend) SetModel(name string) (engine.Event, error) {
	if b.readOnly != "" || name != "offline" {
		return engine.Event{}, fmt.Errorf("model %q needs OPENAI_API_KEY", name)
	}
	return b.s.ChangeModel(name, b.sink())
}

func (b *fuzzBackend) SetAgent(name string) (engine.Event, error) {
	if b.readOnly != "" || name != "critic" {
		return engine.Event{}, fmt.Errorf("no agent %q: the agents are critic", name)
	}
	return b.s.SwitchAgent(name, b.sink())
}

// Fork opens a session whose journal is this one's, up to step.
func (b *fuzzBackend) Fork(step int) (Backend, []engine.Event, error) {
	events, _, err := readJournal(b.journal, b.id, b.id)
	if err != nil || b.readOnly != "" {
		return nil, nil, errors.New("cannot fork a damaged session")
	}
	var kept []engine.Event
	for _, ev := range events {
		if ev.Step > step || ev.Step == step && ev.Kind == engine.KindRunStarted {
			break
		}
		kept = append(kept, ev)
	}
	id := fmt.Sprintf("0mx2fork%04d", len(b.h.backends))
	return b.h.newBackend(id, journal{name: id, events: kept}, len(kept)), kept, nil
}

func (b *fuzzBackend) Clear() (Backend, []engine.Event, error) {
	return b.h.newBackend(fmt.Sprintf("0mx2new0%04d", len(b.h.backends)), journal{}, 0), nil, nil
}

func (b *fuzzBackend) Export(format, file string) (string, error) {
	return "/tmp/" + b.id + "." + format, nil
}

func (b *fuzzBackend) Trust() (string, error) { return "", errors.New("/ws has no .agentty.json") }

func (b *fuzzBackend) ModelName() string { return b.s.Model }

func (b *fuzzBackend) Workflows() ([]WorkflowInfo, error) {
	return []WorkflowInfo{{Name: "release", Description: "a product, checked", Inputs: []string{"a", "b"}}}, nil
}

// PrepareWorkflow starts a run that plays the journal of the workflow
// release (a real one's events); "nope" is no workflow, and a missing
// input b is refused.
func (b *fuzzBackend) PrepareWorkflow(name string, in map[string]string) (func(context.Context) <-chan engine.Event, string, error) {
	switch {
	case b.readOnly != "":
		return nil, "", errors.New("this session is read-only: " + b.readOnly)
	case name != "release":
		return nil, "", fmt.Errorf("no workflow is called %q; the workflows are: release", name)
	case in["b"] == "x":
		return nil, "", errors.New("release.yaml:4: inputs.b: not a whole number")
	}
	for i, j := range b.h.journals {
		if j.name == "workflow.jsonl" {
			b.h.playing = i
		}
	}
	return func(ctx context.Context) <-chan engine.Event { return b.Start(ctx, "workflow release") }, "", nil
}

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
	compact  bool         // a compaction (/compact): its events, then the channel closes
}

// fuzzSessions is the picker's store: listings chosen by the input, and
// sessions that open on a journal (or fail to).
type fuzzSessions struct {
	h    *harness
	list []SessionInfo
	err  error
}

func (s *fuzzSessions) List() ([]SessionInfo, error) { return s.list, s.err }

var (
	_ Searcher      = (*fuzzSessions)(nil)
	_ SearchIndexer = (*fuzzSessions)(nil)
)

// Search finds, whatever the query, hits of sessions (one that opens,
// one that fails to) and of files, their text the fuzzer's worst; a query
// with "fail" in it fails, and the scope filters as the index does.
func (s *fuzzSessions) Search(_ context.Context, query, scope string, k int) ([]SearchHit, error) {
	if strings.Contains(query, "fail") {
		return nil, errors.New("search: index.db: database disk image is malformed\n(it is rebuilt)")
	}
	var hits []SearchHit
	if scope != "workspace" {
		for i, id := range []string{"0mx2list0001", "0mx2fuzz0001", "0mx2list0006"} {
			hits = append(hits, SearchHit{Source: "sessions", Kind: []string{"user", "answer", "memory"}[i], Session: id,
				Title: fuzzTexts[(i+3)%len(fuzzTexts)], Run: "run-1", Step: i + 1, Text: fuzzTexts[(i+4)%len(fuzzTexts)]})
		}
	}
	if scope != "sessions" {
		for i, text := range fuzzTexts {
			hits = append(hits, SearchHit{Source: "workspace", Kind: "file", Path: fmt.Sprintf("dir/%d/\x1b[2J%s", i, text),
				StartLine: i * 40, EndLine: i*40 + strings.Count(text, "\n"), Text: text})
		}
	}
	return hits[:min(k, len(hits))], nil
}

func (s *fuzzSessions) UpdateIndex(context.Context) error { return nil }

func (s *fuzzSessions) Open(id string) (Backend, []engine.Event, error) {
	i := 0
	for _, c := range id {
		i += int(c)
	}
	if i%7 == 0 {
		return nil, nil, fmt.Errorf("sessions: %s: session is open in another agentty", id)
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
	states   map[string]bool // the states the console was seen in
	typed    int             // runes typed and pasted so far
	subs     []*fuzzSub      // the sub-runs made up so far
}

// fuzzSub is a sub-run the harness makes up, event by event, interleaved
// with the others' and the run's: it starts, decides to call an agent (whose
// call a nested sub-run may hang under) and a tool, writes memory, ends.
type fuzzSub struct {
	run, parent, call, agent string
	stage, step              int
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
	opSlash       // a slash command typed, then a key
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
		l := SessionInfo{ID: fmt.Sprintf("0mx2list%04d", i), Title: fuzzTexts[i%len(fuzzTexts)],
			Model: "offline", Steps: i, Interrupted: i%3 == 1, Updated: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
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

// fuzzSize maps two bytes to a terminal size from 20×8 to 300×100: every
// width up to 259, then steps of 2 or 3 up to 300.
func fuzzSize(w, h byte) (int, int) {
	width := 20 + int(w)
	if w >= 240 {
		width = 260 + (int(w)-240)*40/15
	}
	return width, 8 + int(h)%93
}

func (h *harness) resize() {
	h.w, h.h = fuzzSize(h.byte(), h.byte())
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
		h.typeIn(k)
	case opPaste:
		k := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(h.text()), Paste: true}
		h.trace("paste %q", string(k.Runes))
		h.typeIn(k)
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
	case opSlash:
		line := fuzzSlash[h.pick(len(fuzzSlash))]
		h.trace("slash %q", line)
		h.typeIn(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(line)})
		k := []string{"enter", "tab", "esc", "down", "up", ""}[h.pick(6)]
		if k != "" {
			h.trace("key %s", k)
			h.update(keyNamed(k))
		}
	case opOther:
		msgs := []tea.Msg{tea.FocusMsg{}, tea.BlurMsg{}, h.m.spin.Tick(), struct{}{}, tea.QuitMsg{}, nil}
		msg := msgs[h.pick(len(msgs))]
		h.trace("message %T", msg)
		h.update(msg)
	}
	h.answered()
	h.check(h.log[len(h.log)-1])
}

// fuzzSlash are the command lines opSlash types.
var fuzzSlash = []string{"/", "/c", "/compact", "/compact keep the names", "/clear", "/model offline", "/model nope", "/model",
	"/agent critic", "/agent nobody", "/agent", "/fork", "/fork 1", "/fork x", "/export", "/export json out.json", "/memory",
	"/trust", "/help", "/nope", "//not a command", "/m", "/model a b",
	"/workflow", "/workflow release a=1", "/workflow nope", `/workflow release a="x`, "/workflow re", "/workflow release b=x", "/w",
	"/search", "/search retry policy", "/search fail"}

// maxTyped bounds the text typed and pasted into one input's console: the
// input box re-wraps all of its text on every frame (bubbles' textarea), so
// a fuzzer pasting hundreds of kilobytes would measure only that.
const maxTyped = 4096

func (h *harness) typeIn(k tea.KeyMsg) {
	if h.typed += len(k.Runes); h.typed > maxTyped {
		h.trace("(not typed: enough text)")
		return
	}
	h.update(k)
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
	// The waiters of the closed run; a run its close starts (a queued
	// task) adds waiters of its own after them, which wait for events.
	for n := len(h.waiters); n > 0 && len(h.waiters) > 0; n-- {
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
	case r.finished || r.compact && (len(r.queue) == 0 || r.ctx.Err() != nil):
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
			if ev.Kind == engine.KindRunStarted && ev.ParentRun == "" && r.cursor > 1 {
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
	if ev.Kind == engine.KindRunFinished && ev.ParentRun == "" { // a sub-run's end is not the run's
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
	switch h.pick(14) {
	case 13:
		h.workflowEvent(ev)
		return
	case 11:
		upTo := 0
		if b, ok := h.m.backend.(*fuzzBackend); ok {
			upTo = h.pick(len(b.s.History) + 1)
		}
		ev.Phase, ev.Kind, ev.Data = engine.Perceive, engine.KindContextCompacted, &engine.ContextCompacted{Summary: h.text(), Upto: upTo,
			Messages: upTo, TokensBefore: h.pick(200) * 1000, TokensAfter: h.pick(50) * 100, Model: h.text(), Focus: h.text(), Manual: h.pick(2) == 0}
	case 12:
		ev.Kind, ev.Data = engine.KindModelChanged, &engine.ModelChanged{Model: h.text()}
	case 9:
		h.subEvent()
		return
	case 10:
		ev.Kind, ev.Data = engine.KindHandoff, &engine.Handoff{From: "lead", To: h.agentName(), Call: "call_9_0"}
		if len(h.subs) > 0 && h.pick(2) == 0 {
			sub := h.subs[h.pick(len(h.subs))]
			ev.Run, ev.Agent, ev.ParentRun, ev.ParentCall = sub.run, sub.agent, sub.parent, sub.call
		}
	case 0, 1:
		ev.Kind, ev.Data = engine.KindTextDelta, &engine.TextDelta{Text: h.text(), Reasoning: h.pick(4) == 0, Attempt: 1}
	case 2:
		ev.Kind, ev.Data = engine.KindRetry, &engine.RetryScheduled{Op: []string{"model", "tool"}[h.pick(2)], Attempt: 2, Cause: h.text()}
	case 3:
		ev.Kind, ev.Data = engine.KindMemoryChanged, &engine.MemoryChanged{Op: []engine.MemoryOp{engine.MemorySet, engine.MemoryDelete}[h.pick(2)],
			Key: []string{"city", "name", "k"}[h.pick(3)], Value: h.text(), Source: "tool"}
	case 4:
		ev.Kind, ev.Data = engine.KindDecision, &engine.Decided{Text: h.text(), Attempts: 1}
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
	if len(h.subs) > 0 && h.pick(4) == 0 { // as a sub-run's
		sub := h.subs[h.pick(len(h.subs))]
		ev.Run, ev.Agent, ev.ParentRun, ev.ParentCall = sub.run, sub.agent, sub.parent, sub.call
	}
	h.madeUp(ev)
}

// workflowEvent makes up an event of a workflow: its start, a step's end
// (any status, any output), a step's tool call, its end.
func (h *harness) workflowEvent(ev engine.Event) {
	steps := []string{"draft", "check", h.text()}
	ev.Workflow = []string{"release", h.text()}[h.pick(2)]
	switch h.pick(4) {
	case 0:
		ev.Phase, ev.Kind, ev.Data = engine.Observe, engine.KindWorkflowStarted, &engine.WorkflowStarted{Name: ev.Workflow, File: h.text(), Steps: steps}
	case 1:
		step := steps[h.pick(3)]
		ev.WorkflowStep = step
		ev.Phase, ev.Kind, ev.Data = engine.Observe, engine.KindWorkflowStepFinished, &engine.WorkflowStepFinished{Step: step,
			Status: []string{"ok", "error", "skipped", "not run", h.text()}[h.pick(5)], Output: h.text(), Attempts: h.pick(4), Items: h.pick(3)}
	case 2:
		step := steps[h.pick(2)]
		c := engine.ToolCall{ID: fmt.Sprintf("wf-%s-%d", step, h.pick(3)+1), Name: []string{"calculator", agentTool}[h.pick(2)], Args: json.RawMessage(`{"agent":"w","task":"t"}`)}
		ev.WorkflowStep = step
		ev.Phase, ev.Kind, ev.Data = engine.Act, engine.KindToolStarted, &engine.ToolStarted{ID: c.ID, Name: c.Name, Args: c.Args}
	case 3:
		ev.Phase, ev.Kind, ev.Data = engine.Observe, engine.KindWorkflowFinished, &engine.WorkflowFinished{Name: ev.Workflow,
			Status: []string{"ok", "error", h.text()}[h.pick(3)], Output: h.text(), Error: h.text()}
	}
	h.madeUp(ev)
}

// madeUp has the run send evs, or, with no run going, applies them as a
// journal's events on resume.
func (h *harness) madeUp(evs ...engine.Event) {
	for _, ev := range evs {
		if h.run != nil && !h.run.finished && h.run.gate == nil {
			h.run.queue = append(h.run.queue, ev)
			h.trace("engine will send %s of %s", ev.Kind, ev.Run)
			continue
		}
		if h.run == nil && h.m.events == nil { // no run: as a journal's event on resume
			if b, ok := h.m.backend.(*fuzzBackend); ok && b.emit(ev) != nil {
				continue
			}
			h.trace("event %s of %s outside a run", ev.Kind, ev.Run)
			h.update(engineEventMsg{ev})
		}
	}
}

// agentName is an agent's name: a plain one, or any text.
func (h *harness) agentName() string {
	if n := h.pick(4); n < 3 {
		return []string{"researcher", "critic", "billing"}[n]
	}
	return h.text()
}

// subEvent moves a made-up sub-run on one event, or starts a new one:
// under the run's agent call, or nested under a sub-run's.
func (h *harness) subEvent() {
	steps := 0
	if b, ok := h.m.backend.(*fuzzBackend); ok {
		steps = b.s.Steps
	}
	env := func(sub *fuzzSub, step int, kind engine.Kind, data any) engine.Event {
		return engine.Event{V: engine.SchemaVersion, Session: "0mx2fuzz0001", Run: sub.run, Agent: sub.agent, ParentRun: sub.parent,
			ParentCall: sub.call, Step: step, Kind: kind, Time: time.Now(), Data: data}
	}
	agentCall := func(id string, agent string) engine.ToolCall {
		args, _ := json.Marshal(map[string]string{"agent": agent, "task": h.text()})
		return engine.ToolCall{ID: id, Name: agentTool, Args: args}
	}
	if i := h.pick(len(h.subs) + 2); i < len(h.subs) {
		sub := h.subs[i]
		calc := engine.ToolCall{ID: "calc", Name: "calculator", Args: json.RawMessage(`{"expression":"1+1"}`)}
		call := agentCall("deleg", h.agentName())
		var ev engine.Event
		switch sub.stage {
		case 1:
			sub.step = steps + 1
			ev = env(sub, sub.step, engine.KindStepStarted, &engine.StepStarted{})
		case 2:
			ev = env(sub, sub.step, engine.KindDecision, &engine.Decided{ToolCalls: []engine.ToolCall{call, calc}, Attempts: 1})
		case 3:
			ev = env(sub, sub.step, engine.KindToolStarted, &engine.ToolStarted{Index: 0, ID: call.ID, Name: call.Name, Args: call.Args})
		case 4:
			ev = env(sub, sub.step, engine.KindToolStarted, &engine.ToolStarted{Index: 1, ID: calc.ID, Name: calc.Name, Args: calc.Args})
		case 5:
			ev = env(sub, sub.step, engine.KindToolFinished, &engine.ToolFinished{Index: 1, ID: calc.ID, Name: calc.Name, Status: engine.ToolOK, Result: "2"})
		case 6:
			ev = env(sub, sub.step, engine.KindMemoryChanged, &engine.MemoryChanged{Op: engine.MemorySet, Key: []string{"city", "k"}[h.pick(2)], Value: h.text(), Source: "tool"})
		case 7:
			ev = env(sub, sub.step, engine.KindTextDelta, &engine.TextDelta{Text: h.text(), Attempt: 1})
		case 8:
			ev = env(sub, sub.step, engine.KindToolFinished, &engine.ToolFinished{Index: 0, ID: call.ID, Name: call.Name,
				Status: []engine.ToolStatus{engine.ToolOK, engine.ToolError}[h.pick(2)], Result: h.text()})
		case 9:
			ev = env(sub, sub.step, engine.KindStepFinished, &engine.StepFinished{ToolCalls: 2})
		default:
			ev = env(sub, sub.step, engine.KindRunFinished, &engine.RunFinished{StopReason: []engine.StopReason{engine.StopAnswered,
				engine.StopError, engine.StopStepLimit}[h.pick(3)], Answer: h.text(), Error: h.text()})
			h.subs = slices.Delete(h.subs, i, i+1)
		}
		sub.stage++
		h.trace("sub-run %s: %s", sub.run, ev.Kind)
		h.madeUp(ev)
		return
	}
	// A new sub-run: under the run's agent call (decided and started
	// first), or nested under a sub-run's (its call "deleg").
	sub := &fuzzSub{parent: "run-9", agent: h.agentName(), stage: 1}
	var evs []engine.Event
	if len(h.subs) > 0 && h.pick(2) == 0 {
		p := h.subs[h.pick(len(h.subs))]
		sub.parent, sub.call = p.run, "deleg"
	} else {
		sub.call = fmt.Sprintf("call_9_%d", h.pick(3))
		call := agentCall(sub.call, sub.agent)
		top := &fuzzSub{run: "run-9"}
		evs = append(evs, env(top, steps, engine.KindDecision, &engine.Decided{ToolCalls: []engine.ToolCall{call}, Attempts: 1}),
			env(top, steps, engine.KindToolStarted, &engine.ToolStarted{ID: call.ID, Name: call.Name, Args: call.Args}))
	}
	sub.run = fmt.Sprintf("%s/%d/%s", sub.parent, steps, sub.call)
	evs = append(evs, env(sub, steps, engine.KindRunStarted, &engine.RunStarted{Task: h.text()}))
	h.subs = append(h.subs, sub)
	h.trace("sub-run %s starts", sub.run)
	h.madeUp(evs...)
}

// pause has the gate pause the run, before a decision or a tool call.
func (h *harness) pause() {
	r := h.run
	kind := h.pick(3)
	if r == nil || r.finished || r.gate != nil || r.ctx.Err() != nil || r.compact {
		h.trace("gate: no run to pause")
		return
	}
	p := engine.Pending{At: engine.Decide, Step: r.b.s.Steps + 1, Run: "run-9"}
	parentCall := ""
	if len(h.subs) > 0 && h.pick(2) == 0 { // a sub-run pauses
		sub := h.subs[h.pick(len(h.subs))]
		p.Run, p.Agent, p.ParentRun, parentCall = sub.run, sub.agent, sub.parent, sub.call
	}
	if kind > 0 {
		p.At, p.Approval = engine.Act, kind == 2
		p.ToolCall = &engine.ToolCall{ID: "call_9", Name: "write_file", Args: json.RawMessage(`{"path":"a.txt","content":"` + strings.Repeat("x", h.pick(300)) + `"}`)}
		if strings.HasPrefix(h.journals[h.playing].name, "workflow") { // a workflow's run pauses before a step's call
			p.ToolCall.ID, p.ToolCall.Name = "wf-check-9", agentTool
			p.ToolCall.Args = json.RawMessage(`{"agent":"wf-task-check","task":"` + strings.Repeat("y", len(p.ToolCall.Args)%40) + `"}`)
		}
	}
	h.trace("gate: pause %s", p.At)
	h.send(engine.Event{V: engine.SchemaVersion, Session: r.b.id, Run: p.Run, Agent: p.Agent, ParentRun: p.ParentRun, ParentCall: parentCall, Step: p.Step, Phase: p.At, Kind: engine.KindGatePaused,
		Time: time.Now(), Data: &engine.GatePaused{At: p.At, ToolCall: p.ToolCall, Reason: map[bool]engine.PauseReason{true: "approval", false: "step"}[p.Approval]}})
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
		p := r.gate.pending
		r.gate = nil
		h.trace("gate: resumed (%s)", v.Action)
		r.queue = append([]engine.Event{{V: engine.SchemaVersion, Session: r.b.id, Run: p.Run, Agent: p.Agent, ParentRun: p.ParentRun, Kind: engine.KindGateResumed,
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
	if h.states != nil {
		for _, s := range consoleStates(h.m) {
			h.states[s] = true
		}
	}
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

// readJournal reads journal bytes back at the engine's level, as the
// journal's reader does: a torn last line is dropped, unknown kinds are
// skipped, and the first line that does not decode, or does not apply to
// the session, ends the read with its error. name is used in the error.
func readJournal(b []byte, name, id string) ([]engine.Event, *engine.Session, error) {
	s := engine.NewSession(id)
	var events []engine.Event
	for i, line := range bytes.SplitAfter(b, []byte("\n")) {
		if !bytes.HasSuffix(line, []byte("\n")) {
			break // torn, or the end
		}
		raw := bytes.TrimSpace(line)
		if len(raw) == 0 {
			continue
		}
		ev, err := engine.DecodeEvent(raw)
		if err == nil && ev.Known() {
			err = s.Apply(ev)
		}
		if err != nil {
			return events, s, fmt.Errorf("sessions: %s line %d is corrupt: %w (the session can be opened read-only up to line %d)", name, i+1, err, i)
		}
		events = append(events, ev)
	}
	return events, s, nil
}

// verifyJournals reads every live session's journal back.
func (h *harness) verifyJournals() {
	for _, b := range h.backends {
		if b.readOnly != "" {
			continue
		}
		events, s, corrupt := readJournal(b.journal, b.id, b.id)
		if corrupt != nil {
			h.t.Fatalf("session %s's journal does not read back: %v", b.id, corrupt)
		}
		if len(events) != b.n {
			h.t.Fatalf("session %s's journal has %d events, want %d", b.id, len(events), b.n)
		}
		if b == h.m.backend {
			var ui, disk []string
			for _, f := range h.m.sess.Memory() {
				ui = append(ui, f.Key+"="+f.Value)
			}
			for _, f := range s.Memory() { // the console shows it made safe
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

// consoleStates names the states m is in, for TestConsoleSeeds.
func consoleStates(m *Model) []string {
	var out []string
	add := func(ok bool, s string) {
		if ok {
			out = append(out, s)
		}
	}
	n := len(m.chat.items)
	add(n == 0, "empty")
	add(n > 0 && m.chat.items[n-1].streaming && m.chat.items[n-1].buf.Len() > 0, "streaming")
	add(m.running && m.state == "reasoning", "reasoning")
	add(m.pause != nil && m.pause.pending.ToolCall == nil, "paused at decide")
	add(m.pause != nil && m.pause.pending.ToolCall != nil, "paused at act")
	add(m.pause != nil && m.pause.pending.Approval, "asking approval")
	add(m.argsEditor != nil, "editor")
	add(m.memForm != nil, "memory form")
	add(m.picker != nil, "picker")
	add(m.picker != nil && m.picker.FilterState() != 0, "picker filtered")
	add(m.detail != nil, "details")
	add(m.help.open, "help")
	add(!m.chat.follow, "scrolled up")
	add(m.chat.expanded, "expanded")
	add(m.width < wideWidth, "narrow")
	add(m.width >= wideWidth, "wide")
	add(m.width == 20 && m.height == 8, "20x8")
	add(m.focus == focusMemory, "memory focus")
	add(m.focus == focusTimeline, "timeline focus")
	add(m.note == noteCancelling, "cancelling")
	add(m.canContinue(), "interrupted")
	if b, ok := m.backend.(*fuzzBackend); ok && b.readOnly != "" {
		add(true, "read-only")
		add(strings.Contains(b.readOnly, "corrupt"), "damaged")
	}
	for _, it := range m.chat.items {
		add(it.kind == itemNote && strings.Contains(it.text, "cut off"), "cut off")
	}
	for _, r := range m.tl.rows {
		add(r.retries > 0, "retried")
	}
	for _, d := range m.tl.details {
		add(d.trimmed != nil, "trimmed")
	}
	add(len(m.sess.Memory()) > 0, "memory")
	_, slash := m.completions()
	add(slash, "slash list")
	add(m.state == "compacting", "compacting")
	for _, r := range m.tl.rows {
		add(r.compact != nil, "compacted")
	}
	add(len(m.tl.subs) > 0, "sub-run")
	for _, r := range m.tl.rows {
		add(r.folded, "folded")
		add(r.toggled && !r.folded, "unfolded")
	}
	for _, it := range m.chat.items {
		add(it.sub != nil && m.chat.expanded, "delegation expanded")
		add(it.kind == itemStep, "workflow step")
	}
	for i, r := range m.tl.rows {
		add(r.wf != nil && len(m.tl.children[i]) > 0 && r.status == "running", "workflow running")
	}
	add(m.pause != nil && m.pause.step != "", "paused at a workflow step")
	add(m.backend != nil && strings.HasPrefix(m.backend.SessionID(), "0mx2fork"), "forked")
	add(m.search != nil, "search")
	add(m.search != nil && len(m.search.hits) > 0, "search hits")
	add(m.search != nil && m.search.err != "", "search error")
	add(m.search != nil && m.detail != nil, "search file")
	return out
}

// seedStates are the states the committed seeds must reach between them.
var seedStates = []string{"empty", "streaming", "reasoning", "paused at decide", "paused at act", "asking approval",
	"editor", "memory form", "picker", "picker filtered", "details", "help", "scrolled up", "expanded", "narrow",
	"wide", "20x8", "memory focus", "timeline focus", "cancelling", "interrupted", "read-only", "damaged",
	"cut off", "retried", "trimmed", "memory", "sub-run", "folded", "unfolded", "delegation expanded", "slash list", "compacting",
	"compacted", "workflow step", "workflow running", "paused at a workflow step", "forked",
	"search", "search hits", "search error", "search file"}

// TestConsoleSeeds plays the committed seeds (as go test does) and checks
// that between them they reach every state the fuzzer should start from.
func TestConsoleSeeds(t *testing.T) {
	journals := loadJournals(t)
	paths, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzConsole", "*"))
	seen := map[string]bool{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data, err := readCorpusFile(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			h := newHarness(t, journals, data)
			h.states = seen
			defer h.close()
			h.play()
			if os.Getenv("AGENTTY_SEED_TRACE") != "" {
				t.Logf("%s", strings.Join(h.log, "\n"))
			}
		})
	}
	for _, s := range seedStates {
		if !seen[s] {
			t.Errorf("no seed reaches the state %q", s)
		}
	}
}

// readCorpusFile reads a corpus file of one []byte, as go test writes them.
func readCorpusFile(b []byte) ([]byte, error) {
	text, ok := strings.CutPrefix(string(b), "go test fuzz v1\n")
	if !ok {
		return nil, errors.New("not a go test fuzz v1 file")
	}
	text = strings.TrimSpace(text)
	lit, ok := strings.CutPrefix(text, "[]byte(")
	if !ok || !strings.HasSuffix(lit, ")") {
		return nil, fmt.Errorf("not one []byte: %q", text)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
	return []byte(s), err
}

// seedBuilder writes the input that plays a scene.
type seedBuilder struct {
	b        []byte
	journals []journal
}

func (s *seedBuilder) op(bs ...int) *seedBuilder {
	for _, c := range bs {
		s.b = append(s.b, byte(c))
	}
	return s
}

func (s *seedBuilder) journal(name string) int {
	for i, j := range s.journals {
		if j.name == name {
			return i
		}
	}
	panic("no journal " + name)
}

// start: the start state, the journal runs play, the picker's list (0: none,
// 1: one, 2: three, 3: 300), the size; upTo is how much of the journal a
// resumed session has.
func (s *seedBuilder) start(state int, journal string, list, upTo, w, h int) *seedBuilder {
	s.op(state, s.journal(journal), list, 1)
	if state == startResumed {
		s.op(upTo)
	}
	return s.op(1, widthByte(w), h-8)
}

func (s *seedBuilder) keys(names ...string) *seedBuilder {
	for _, n := range names {
		i := slices.IndexFunc(fuzzKeys, func(k tea.KeyMsg) bool { return k.String() == n })
		if i < 0 {
			panic("no key " + n)
		}
		s.op(opKey, i)
	}
	return s
}

func (s *seedBuilder) typed(text string) *seedBuilder {
	for len(text) > 0 {
		n := min(len(text), 16)
		s.op(opRunes, n-1)
		s.b = append(s.b, text[:n]...)
		text = text[n:]
	}
	return s
}

func (s *seedBuilder) resize(w, h int) *seedBuilder { return s.op(opResize, widthByte(w), h-8) }

// widthByte is the byte fuzzSize maps to width w.
func widthByte(w int) int {
	for b := range 256 {
		if fw, _ := fuzzSize(byte(b), 0); fw == w {
			return b
		}
	}
	panic(fmt.Sprintf("no width %d", w))
}
func (s *seedBuilder) engine(n int) *seedBuilder {
	for ; n > 32; n -= 32 {
		s.op(opEngineBurst, 31)
	}
	if n > 0 {
		s.op(opEngineBurst, n-1)
	}
	return s
}

// steps moves the run on n events, one op each, so that each state is seen.
func (s *seedBuilder) steps(n int) *seedBuilder {
	for range n {
		s.op(opEngine)
	}
	return s
}

func (s *seedBuilder) wheel(down bool) *seedBuilder {
	if down {
		return s.op(opMouse, 3, 10, 5)
	}
	return s.op(opMouse, 0, 10, 5)
}

// delta makes up a streamed text delta of fuzzTexts[text].
func (s *seedBuilder) delta(text int, reasoning bool) *seedBuilder {
	r := 1
	if reasoning {
		r = 0
	}
	return s.op(opEvent, 1, 0, text, r)
}
func (s *seedBuilder) retry() *seedBuilder { return s.op(opEvent, 1, 2, 0, 0) }

// sub moves the made-up sub-run which on one event (see subEvent): its
// agent's and task's text, then extra bytes for the choices of its stage
// (memory: 2, a delta: 1, the agent call's end: 2, its end: 3).
func (s *seedBuilder) sub(which, extra int) *seedBuilder {
	s.op(opEvent, 1, 9, which, 0, 0)
	for range extra {
		s.op(0)
	}
	return s
}

// subNew starts the n-th made-up sub-run (n of them are going), under the
// run's agent call, or under sub-run parent's (parent >= 0).
func (s *seedBuilder) subNew(n, parent int) *seedBuilder {
	s.op(opEvent, 1, 9, n, 0)
	if n > 0 && parent >= 0 {
		return s.op(0, parent, 0)
	}
	if n > 0 {
		s.op(1)
	}
	return s.op(0, 0, 0)
}

// pause: 0 before deciding, 1 before a tool call, 2 asking approval.
func (s *seedBuilder) pause(kind int, argLen int) *seedBuilder {
	if kind == 0 {
		return s.op(opPause, kind)
	}
	return s.op(opPause, kind, argLen)
}
func (s *seedBuilder) paste(text int) *seedBuilder { return s.op(opPaste, text) }

// consoleSeeds are the scenes the committed seeds play.
func consoleSeeds(js []journal) map[string][]byte {
	seeds := map[string][]byte{}
	add := func(name string, f func(s *seedBuilder)) {
		s := &seedBuilder{journals: js}
		f(s)
		seeds[name] = s.b
	}
	add("empty-scroll", func(s *seedBuilder) {
		s.start(startNew, "cancelled.jsonl", 0, 0, 80, 24).keys("pgup", "pgdown").wheel(false).wheel(true).
			keys("tab", "pgup", "k", "j", "g", "G").resize(20, 8).keys("pgdown", "pgup").wheel(true).resize(300, 100).keys("pgdown")
	})
	add("streaming-cancel", func(s *seedBuilder) {
		s.start(startNew, "streamed-tools.jsonl", 0, 0, 120, 40).typed("do many things").keys("enter").engine(33).
			delta(1, false).delta(8, false).delta(4, false).delta(8, false).steps(4).resize(80, 24).keys("pgup").wheel(false).
			keys("ctrl+x").resize(20, 8).keys("ctrl+c").resize(80, 24).steps(1).keys("ctrl+x").steps(1).keys("pgup")
	})
	add("streaming-retry", func(s *seedBuilder) {
		s.start(startOffline, "offline-calc.jsonl", 0, 0, 100, 30).typed("what is 17*23?").keys("enter").engine(3).
			delta(9, true).delta(0, true).delta(3, false).delta(1, false).delta(4, false).retry().delta(5, false).delta(2, false).
			steps(12).engine(40).keys("tab", "tab", "up", "up", "enter", "pgdown", "down", "esc")
	})
	add("paused-decide", func(s *seedBuilder) {
		s.start(startStep, "offline-calc.jsonl", 0, 0, 120, 40).typed("what is 17*23?").keys("enter").engine(2).
			pause(0, 0).keys("?").resize(60, 20).keys("?", "enter").engine(4).pause(0, 0).keys("c").engine(40)
	})
	add("paused-act-editor", func(s *seedBuilder) {
		s.start(startNew, "streamed-tools.jsonl", 0, 0, 90, 30).typed("do many things").keys("enter").engine(5).
			pause(1, 200).keys("e").typed("{\"path\": 1").keys("ctrl+s").resize(20, 8).keys("backspace", "esc").
			keys("e").resize(90, 30).keys("ctrl+s").steps(3).
			pause(2, 30).resize(150, 50).keys("n").steps(3).pause(1, 5).keys("s").steps(3).pause(2, 5).keys("esc").steps(5)
	})
	add("picker", func(s *seedBuilder) {
		s.start(startNew, "offline-remember.jsonl", 3, 0, 100, 30).keys("ctrl+o").keys("/").typed("15").
			resize(20, 8).keys("enter", "down", "esc", "esc").keys("ctrl+o", "down", "down", "enter").
			keys("ctrl+o", "/").typed("list0002").keys("enter", "enter").engine(3).keys("ctrl+r").engine(40)
	})
	add("picker-first", func(s *seedBuilder) {
		s.start(startPicker, "cancelled.jsonl", 2, 0, 80, 24).keys("down", "?", "?", "enter").resize(300, 100).
			keys("ctrl+o", "esc", "tab", "tab", "enter")
	})
	add("details-help", func(s *seedBuilder) {
		s.start(startResumed, "trimmed-approval.jsonl", 1, 200, 120, 40).keys("tab", "tab", "up", "up", "up", "enter").
			keys("pgdown", "down", "down").resize(20, 8).keys("pgup", "esc", "?").resize(80, 24).keys("?", "tab", "?").
			resize(300, 100).keys("enter", "j", "esc", "?")
	})
	add("read-only-damaged", func(s *seedBuilder) {
		s.start(startReadOnly, "damaged.jsonl", 0, 0, 80, 24).typed("hello").keys("enter").engine(2).
			keys("tab", "tab", "tab", "a").typed("city = Paris").keys("enter", "d", "ctrl+r").engine(2).resize(20, 8)
	})
	add("interrupted-continue", func(s *seedBuilder) {
		s.start(startResumed, "streamed-tools.jsonl", 0, 20, 130, 40).keys("ctrl+r").engine(30).
			keys("tab", "tab", "tab", "a").keys("ctrl+c").engine(2).keys("tab", "tab", "tab", "a").
			typed("name = Ada").keys("enter", "e").paste(4).keys("enter", "down", "d")
	})
	add("agents", func(s *seedBuilder) {
		s.start(startStep, "agents.jsonl", 0, 0, 120, 40).typed("compare").keys("enter").engine(12).
			pause(0, 0).keys("enter").engine(20).keys("c").engine(30).keys("tab", "tab", "up", "up", "up", "up", " ", "up", "z").
			keys("ctrl+x").resize(80, 24).keys("down", "down", "z", "enter", "esc", "esc").engine(2).
			// Made-up sub-runs, interleaved: A under the run's call, B
			// nested under A's.
			subNew(0, -1).sub(0, 0).sub(0, 0).sub(0, 0).subNew(1, 0).sub(1, 0).sub(0, 0).sub(1, 0).sub(0, 0).
			sub(0, 2).sub(1, 0).sub(0, 1).sub(1, 0).sub(0, 2).sub(1, 0).sub(0, 0).sub(1, 2).sub(0, 3).
			keys("tab", "tab", "tab").resize(120, 40).keys("ctrl+x").sub(0, 1).sub(0, 2).sub(0, 0).sub(0, 3)
	})
	add("slash-commands", func(s *seedBuilder) {
		s.start(startNew, "offline-calc.jsonl", 1, 0, 120, 40).typed("what is 17*23?").keys("enter").engine(40).
			typed("/").keys("down", "down", "esc").typed("m").keys("tab").resize(80, 24).keys("backspace", "backspace", "esc", "ctrl+u", "esc").
			typed("/compact names").keys("enter").steps(1).steps(1).typed("/model offline").keys("enter").typed("/nope").keys("enter").
			op(opEvent, 1, 11, 3, 0, 9, 23, 0, 0, 0).op(opEvent, 1, 12, 0).op(opSlash, 8, 0).op(opSlash, 11, 5).
			keys("tab", "tab").resize(120, 40).keys("enter", "esc").op(opSlash, 4, 0).op(opSlash, 20, 0).engine(5)
	})
	add("step-limit-error", func(s *seedBuilder) {
		s.start(startNew, "step-limit.jsonl", 0, 0, 120, 40).typed("loop").keys("enter").engine(40).
			op(opJournal, s.journal("model-error.jsonl")).typed("fail").keys("enter").engine(10).paste(3).paste(1).keys("enter").
			op(opJournal, s.journal("offline-remember.jsonl")).engine(40).keys("up", "up", "down")
	})
	add("workflow-fork", func(s *seedBuilder) {
		s.start(startStep, "offline-calc.jsonl", 0, 0, 120, 40).typed("/workflow nope").keys("enter").
			typed("/workflow re").keys("tab").typed("a=17").keys("enter").steps(3).pause(0, 0).keys("enter").steps(4).
			pause(1, 30).keys("e", "esc", "enter").steps(12).keys("c").engine(60).resize(80, 24).
			keys("ctrl+x", "tab", "tab", "up", "up", "enter", "esc", "up", "up", "up", "f", "enter").
			op(opEvent, 1, 13, 0, 1, 0).op(opEvent, 1, 13, 0, 1, 1, 3).keys("tab", "tab", "f", "enter")
	})
	add("search", func(s *seedBuilder) {
		s.start(startResumed, "offline-remember.jsonl", 1, 200, 120, 40).keys("ctrl+f").typed("retry").keys("enter", "down").
			resize(20, 8).keys("up", "tab", "down", "enter").resize(80, 24).keys("pgdown", "esc", "tab", "tab", "up", "up", "enter").
			keys("ctrl+f", "enter").typed("fail").keys("enter").resize(300, 100).keys("esc").
			op(opSlash, 32, 0).keys("tab", "esc").op(opSlash, 31, 0).keys("down", "enter", "ctrl+f").typed("x").keys("enter", "enter")
	})
	return seeds
}

// TestWriteConsoleSeeds rewrites testdata/fuzz/FuzzConsole from
// consoleSeeds when AGENTTY_WRITE_SEEDS is set.
func TestWriteConsoleSeeds(t *testing.T) {
	if os.Getenv("AGENTTY_WRITE_SEEDS") == "" {
		t.Skip("AGENTTY_WRITE_SEEDS=1 rewrites the seeds")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzConsole")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range consoleSeeds(loadJournals(t)) {
		text := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(b)))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
