package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentty/agentty/engine"
)

// memory is the Memory pane: the session's facts, the context budget and
// the session's tokens.
type memory struct {
	sess    *engine.Session // the console's fold: the facts and the tokens
	cursor  int
	request *engine.ModelRequest
	sources []string // the project instructions of the last run
	width   int
	height  int

	cache    []string
	cacheKey [3]int
	dirty    bool
}

func (m *memory) apply(ev engine.Event) {
	switch ev.Data.(type) {
	case *engine.MemoryChanged, *engine.ModelRequest, *engine.UsageRecorded, *engine.RunStarted, *engine.ContextCompacted:
		m.dirty = true
	}
	switch d := ev.Data.(type) {
	case *engine.RunStarted:
		if ev.ParentRun == "" {
			m.sources = d.Instructions
		}
	case *engine.MemoryChanged: // the session has applied it: a fact may be gone
		m.cursor = min(m.cursor, max(len(m.facts())-1, 0))
	case *engine.ModelRequest:
		m.request = d
	}
}

// facts are the session's facts, in the order they were first written.
func (m *memory) facts() []engine.Fact {
	if m.sess == nil {
		return nil
	}
	return m.sess.Memory()
}

func (m *memory) move(n int) {
	m.cursor = min(max(m.cursor+n, 0), max(len(m.facts())-1, 0))
	m.dirty = true
}

func (m *memory) selected() (engine.Fact, bool) {
	if facts := m.facts(); m.cursor < len(facts) {
		return facts[m.cursor], true
	}
	return engine.Fact{}, false
}

// setSize sets the size of the pane's content.
func (m *memory) setSize(width, height int) {
	if width != m.width || height != m.height {
		m.width, m.height, m.dirty = width, height, true
	}
}

// view draws the facts, the selected one marked when focused, above the
// context budget and the session's tokens.
func (m *memory) view(focused bool) []string {
	width := m.width
	key := [3]int{width, m.height, 0}
	if focused {
		key[2] = 1
	}
	if !m.dirty && key == m.cacheKey && m.cache != nil {
		return m.cache
	}
	out := m.render(width, focused)
	for i, l := range out {
		out[i] = fit(l, width)
	}
	m.cache, m.cacheKey, m.dirty = out, key, false
	return out
}

func (m *memory) render(width int, focused bool) []string {
	var out []string
	facts := m.facts()
	var usage engine.Usage
	if m.sess != nil {
		usage = m.sess.Usage
	}
	if len(facts) == 0 {
		out = append(out, styleDim.Render("no facts yet"))
		if focused {
			out = append(out, styleDim.Render("a: add a fact"))
		}
	}
	foot := m.budget(width)
	if len(m.sources) > 0 {
		foot = append(foot, styleDim.Render(ansi.Truncate("instructions: "+strings.Join(m.sources, ", "), width, "…")))
	}
	foot = append(foot, styleDim.Render(ansi.Truncate(fmt.Sprintf("tokens: %d in, %d out", usage.PromptTokens, usage.CompletionTokens), width, "…")))
	if usage.Calls > 0 {
		c := usage.CostString()
		if strings.HasPrefix(c, "$") {
			c = "cost: " + c
		}
		foot = append(foot, styleDim.Render(ansi.Truncate(c, width, "…")))
	}
	room := max(m.height-len(foot)-1, 1)
	start := max(0, min(m.cursor-room+1, len(facts)-room))
	for i := start; i < len(facts) && len(out) < room; i++ {
		f := facts[i]
		mark := fmt.Sprintf(" @%d", f.Step)
		if f.Agent != "" { // the agent whose run wrote it
			mark = " · " + ansi.Truncate(f.Agent, max(width/3, 4), "…") + mark
		}
		step := styleDim.Render(mark)
		line := ansi.Truncate(styleKey.Render(f.Key)+" = "+f.Value, width-ansi.StringWidth(step), "…") + step
		if focused && i == m.cursor {
			line = styleCursor.Render(padRight(ansi.Strip(line), width))
		}
		out = append(out, line)
	}
	for len(out) < m.height-len(foot) {
		out = append(out, "")
	}
	out = append(out, foot...)
	return out[:max(m.height, 0)]
}

// budget draws the context bar: the request's estimated tokens of the
// budget, split into its parts (s system, i project instructions, c the
// summary of compacted history, m memory, h history, t tools), over the
// model's window when it is known (the part past the budget, kept for the
// answer, drawn -), with the compaction trigger marked |; then each part's
// tokens, and the window and trigger.
func (m *memory) budget(width int) []string {
	r := m.request
	if r == nil || r.Budget == 0 {
		return []string{styleDim.Render("context: -"), "", ""}
	}
	hist := max(r.Tokens-r.SystemTokens-r.InstructionTokens-r.SummaryTokens-r.MemoryTokens-r.ToolTokens, 0)
	scale := r.Budget
	if r.Window > r.Budget {
		scale = r.Window
	}
	barW := max(width-2, 4)
	cellOf := func(n int) int { return min(int(int64(n)*int64(barW)/int64(scale)), barW) }
	parts := []struct {
		n  int
		ch string
	}{{r.SystemTokens, "s"}, {r.InstructionTokens, "i"}, {r.SummaryTokens, "c"}, {r.MemoryTokens, "m"}, {hist, "h"}, {r.ToolTokens, "t"}}
	bar := make([]string, 0, barW)
	for _, p := range parts {
		cells := cellOf(p.n)
		if p.n > 0 && cells == 0 {
			cells = 1
		}
		for range min(cells, barW-len(bar)) {
			bar = append(bar, p.ch)
		}
	}
	for budget := cellOf(r.Budget); len(bar) < barW; {
		if len(bar) < budget {
			bar = append(bar, "·")
		} else {
			bar = append(bar, "-")
		}
	}
	if r.Trigger > 0 && r.Trigger < scale {
		bar[min(cellOf(r.Trigger), barW-1)] = "|"
	}
	ctx := fmt.Sprintf("context: %d / %d tok (%d%%)", r.Tokens, r.Budget, r.Tokens*100/r.Budget)
	if ansi.StringWidth(ctx) > width { // the share is what matters: keep it in sight
		ctx = fmt.Sprintf("context %s/%s (%d%%)", kTok(r.Tokens), kTok(r.Budget), r.Tokens*100/r.Budget)
	}
	out := []string{ansi.Truncate(ctx, width, "…"), "[" + strings.Join(bar, "") + "]"}
	for _, l := range contextLegend(r, hist, width) {
		out = append(out, styleDim.Render(l))
	}
	return out
}

// contextLegend says what the bar's letters stand for, and the limits (the
// model's window, where the session compacts: the bar's |), in words when
// they fit in width and one item a line when they do not.
func contextLegend(r *engine.ModelRequest, hist, width int) []string {
	type part struct {
		long, short string
		tokens      int
	}
	parts := []part{{"system", "s", r.SystemTokens}, {"instructions", "i", r.InstructionTokens}, {"summary", "c", r.SummaryTokens},
		{"memory", "m", r.MemoryTokens}, {"history", "h", hist}, {"tools", "t", r.ToolTokens}}
	var long, short []string
	for i, p := range parts {
		if p.tokens == 0 && i > 0 && i < 3 { // instructions and a summary only when there are some
			continue
		}
		long = append(long, p.long+" "+kTok(p.tokens))
		short = append(short, p.short+" "+kTok(p.tokens))
	}
	var limits []string
	if r.Window > 0 {
		limits = append(limits, "window "+kTok(r.Window))
	}
	if r.Trigger > 0 {
		limits = append(limits, "compacts at "+kTok(r.Trigger)+" (|)")
	}
	fits := func(items []string, sep string) []string {
		if line := strings.Join(items, sep); ansi.StringWidth(line) <= width {
			return []string{line}
		}
		out := make([]string, len(items))
		for i, it := range items {
			out[i] = ansi.Truncate(it, width, "…")
		}
		return out
	}
	legend := []string{strings.Join(long, " · ")}
	if ansi.StringWidth(legend[0]) > width {
		legend = []string{ansi.Truncate(strings.Join(short, " "), width, "…")}
	}
	if len(limits) == 0 {
		return legend
	}
	return append(legend, fits(limits, " · ")...)
}

// factEdit is what a key in the Memory pane asks of the console.
type factEdit int

const (
	editNone   factEdit = iota
	editAdd             // open the form, empty
	editFact            // open the form on the selected fact
	editDelete          // delete the selected fact
)

// update handles a key while the Memory pane has the focus: it moves the
// selection, and says which edit the key asks for (the console makes it:
// the form and the journal are not the pane's).
func (m *memory) update(msg tea.KeyMsg, k keyMap) factEdit {
	switch {
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(1)
	case key.Matches(msg, k.MemAdd):
		return editAdd
	case key.Matches(msg, k.MemEdit):
		return editFact
	case key.Matches(msg, k.MemDelete):
		return editDelete
	}
	return editNone
}

// factForm is the form that adds or edits a fact, written key = value (a
// textinput, embedded).
type factForm struct {
	textinput.Model
}

// newFactForm opens the form, on f when it edits one.
func newFactForm(f *engine.Fact, width int) *factForm {
	ti := textinput.New()
	ti.Prompt = "key = value: "
	ti.Width = max(width-20, 10)
	if f != nil {
		ti.SetValue(f.Key + " = " + f.Value)
	}
	ti.Focus()
	return &factForm{ti}
}

// formResult is what a key in the form did.
type formResult int

const (
	formEditing formResult = iota
	formCancelled
	formRefused // not written as key = value
	formDone    // the change is ready
)

// update handles a key in the form: esc cancels, enter reads the fact, the
// rest edits the text.
func (f *factForm) update(msg tea.KeyMsg, k keyMap) (res formResult, c engine.MemoryChanged, cmd tea.Cmd) {
	switch {
	case key.Matches(msg, k.Dismiss):
		return formCancelled, c, nil
	case key.Matches(msg, k.Submit):
		name, value, ok := strings.Cut(f.Value(), "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return formRefused, c, nil
		}
		return formDone, engine.MemoryChanged{Op: engine.MemorySet, Key: name, Value: value, Source: "person"}, nil
	}
	f.Model, cmd = f.Model.Update(msg)
	return formEditing, c, cmd
}

// view draws the form in place of the input box, w cells wide.
func (f *factForm) view(w int) []string {
	return box("Memory: add or edit a fact (enter saves, esc cancels)", true, w, 2, []string{f.Model.View(), ""}, false)
}

// memoryKey makes the edit a key in the Memory pane asks for.
func (m *Model) memoryKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch edit := m.mem.update(msg, m.keys); edit {
	case editAdd, editFact:
		if m.running {
			m.note = "memory can be edited when no run is going"
			return m, nil
		}
		var on *engine.Fact
		if f, ok := m.mem.selected(); ok && edit == editFact {
			on = &f
		}
		m.memForm = newFactForm(on, m.width)
		return m, textinput.Blink
	case editDelete:
		if f, ok := m.mem.selected(); ok {
			return m, m.changeMemory(engine.MemoryChanged{Op: engine.MemoryDelete, Key: f.Key, Source: "person"})
		}
	}
	return m, nil
}

// memFormKey handles a key in the memory form, and sends the fact written.
func (m *Model) memFormKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	res, c, cmd := m.memForm.update(msg, m.keys)
	switch res {
	case formCancelled:
		m.memForm, m.note = nil, "" // what the note said was of the form
	case formRefused:
		m.note = "write it as key = value"
	case formDone:
		m.memForm, m.note = nil, ""
		return m, m.changeMemory(c)
	}
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
