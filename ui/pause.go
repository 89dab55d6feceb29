package ui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentty/agentty/engine"
)

// A pause the gate handed over (gateRequest) is answered with the keys of
// its kind, in the pause bar drawn in place of the input box; e opens the
// argument editor on a paused tool call.

// answer is what a key at a pause asks for.
type answer struct {
	verdict *engine.Verdict // the reply to the gate; nil: none
	release bool            // the run goes on without step pauses (c)
	edit    bool            // open the argument editor (e)
	respond bool            // open the editor of a result given for the tool (m)
	inspect bool            // open the request inspector (i)
}

// update says what a key at the pause asks for: nothing when the key means
// nothing in this kind of pause.
func (p *gateRequest) update(msg tea.KeyMsg, k keyMap, stepping bool) answer {
	reply := func(a engine.Action) answer { return answer{verdict: &engine.Verdict{Action: a}} }
	call := p.pending.ToolCall != nil
	if p.pending.Rerun {
		return p.updateRerun(msg, k)
	}
	switch {
	case key.Matches(msg, k.Approve):
		return reply(engine.Proceed)
	case key.Matches(msg, k.Run) && (stepping || p.pending.Break != ""):
		// In step mode: go on, and let this run finish without step
		// pauses; the next run pauses again. An approval outside step
		// mode has nothing to continue past: enter or y approves it.
		a := reply(engine.Proceed)
		a.release = true
		return a
	case key.Matches(msg, k.Skip) && call:
		return reply(engine.Skip)
	case key.Matches(msg, k.Deny) && call:
		return reply(engine.Deny)
	case key.Matches(msg, k.Abort):
		return reply(engine.Abort)
	case key.Matches(msg, k.Edit) && call:
		return answer{edit: true}
	case key.Matches(msg, k.Respond) && call:
		return answer{respond: true}
	case key.Matches(msg, k.Allow) && call && p.pending.Approval && !p.pending.Rerun:
		return answer{verdict: &engine.Verdict{Action: engine.Proceed, By: "you, for this session"}}
	case key.Matches(msg, k.Inspect) && p.pending.At == engine.Decide:
		return answer{inspect: true}
	}
	return answer{}
}

// updateRerun is update at the pause of a call an earlier process started
// and left without a result (it may have done its work): as headless
// --continue, it is not run again unless the person chooses to, with a
// key of its own; enter and n leave it answered as interrupted.
func (p *gateRequest) updateRerun(msg tea.KeyMsg, k keyMap) answer {
	switch {
	case key.Matches(msg, k.LeaveUnrun):
		return answer{verdict: &engine.Verdict{Action: engine.Deny, By: "you, leaving it unrun"}}
	case key.Matches(msg, k.RunAgain):
		return answer{verdict: &engine.Verdict{Action: engine.Proceed, By: "you, running it again"}}
	case key.Matches(msg, k.Abort):
		return answer{verdict: &engine.Verdict{Action: engine.Abort}}
	case key.Matches(msg, k.Edit):
		return answer{edit: true}
	case key.Matches(msg, k.Respond):
		return answer{respond: true}
	}
	return answer{}
}

// bar draws the pause in place of the input box, w cells wide: what is
// held back and the keys that answer it. A tool call is shown whole: on
// the title line when it fits there as it is, else each argument on lines
// of its own below it (strings with their lines, runs of spaces shown),
// body lines at a time from p.scroll, with ↑/↓ to scroll. What is
// approved is never cut out of sight.
func (p *gateRequest) bar(w int, stepping bool, body int) []string {
	return p.draw(w, stepping, body, true)
}

// draw is bar, its keys line saying the keys are not armed yet unless
// armed (grace.go).
func (p *gateRequest) draw(w int, stepping bool, body int, armed bool) []string {
	if q := p.pending.Question; q != nil {
		return p.questionBar(q, w, armed)
	}
	paused := "Paused"
	if b := p.pending.Break; b != "" {
		paused = "Break " + flatten(Sanitize(b)) + ":"
	}
	what := fmt.Sprintf("⏸ %s before deciding (step %d)", paused, p.pending.Step)
	if !p.edit.Empty() {
		what += " · request edited"
	}
	if p.pending.At == engine.Observe {
		what = fmt.Sprintf("⏸ %s before the answer (step %d): %s", paused, p.pending.Step, flatten(Sanitize(p.pending.Answer)))
	}
	var args []string
	if c := p.pending.ToolCall; c != nil {
		verb := paused + " before calling"
		switch {
		case p.pending.Rerun:
			verb = "Interrupted before it finished, not run again unless you choose:"
		case p.pending.Approval:
			verb = "Approve calling"
		}
		name := flatten(Sanitize(c.Name))
		what = fmt.Sprintf("⏸ %s %s %s (step %d)", verb, name, Sanitize(string(c.Args)), p.pending.Step)
		if p.preview != "" || !fitsOneLine(string(c.Args), what, w-4-ansi.StringWidth(p.tag())) {
			what = fmt.Sprintf("⏸ %s %s (step %d)", verb, name, p.pending.Step)
			args = p.argLines(w - 4)
		}
	}
	if tag := p.tag(); tag != "" {
		// Cut the title, not the agent's or step's name: the name says
		// which of the parallel runs waits. The arguments are below it.
		what = ansi.Truncate(what, max(w-4-ansi.StringWidth(tag), 10), "…") + tag
	}
	keys := pauseKeys[kindOf(p, stepping)]
	if !armed {
		keys = graceNote
	}
	lines := []string{stylePause.Render(what)}
	if len(args) > 0 && body < 1 {
		keys = fmt.Sprintf("e: see the %d lines of arguments (the terminal is too small) · %s", len(args), keys)
		args = nil
	}
	if len(args) > 0 {
		from := min(max(p.scroll, 0), max(len(args)-body, 0))
		to := min(from+body, len(args))
		lines = append(lines, args[from:to]...)
		if len(args) > body {
			keys = fmt.Sprintf(scrollKeys, from+1, to, len(args)) + keys
		}
	}
	for _, l := range keyLines(keys, w-4, body) {
		lines = append(lines, styleDim.Render(l))
	}
	return box("Paused", true, w, len(lines), lines, false)
}

// argLines is callLines of the paused call at width w, made once per width:
// the bar is drawn on every frame, and its arguments may be long.
func (p *gateRequest) argLines(w int) []string {
	if p.lines == nil || p.linesW != w {
		p.lines, p.linesW = callLines(p.pending.ToolCall.Args, w), w
		if p.preview != "" {
			p.lines = previewLines(p.preview, w)
		}
	}
	return p.lines
}

// previewLines draws a preview w cells wide: a diff's added lines green,
// removed ones red, hunks dim.
func previewLines(text string, w int) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		style := lipgloss.NewStyle()
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "@@"):
			style = styleDim
		case strings.HasPrefix(l, "+"):
			style = styleOK
		case strings.HasPrefix(l, "-"):
			style = styleErr
		}
		for _, r := range wrapRows(Sanitize(showLine(l)), max(w, 10)) {
			out = append(out, style.Render(r))
		}
	}
	return out
}

// tag names the agent or the workflow step whose run is paused, for the
// title line ("" for none).
func (p *gateRequest) tag() string {
	if p.step != "" { // a workflow's step: its name says more than its task agent's
		return " · step " + p.step
	}
	if a := flatten(Sanitize(p.pending.Agent)); a != "" {
		return " · agent " + a
	}
	return ""
}

// fitsOneLine reports whether a call's raw arguments can be shown on the
// title line as they are: one line, no run of spaces or tab a person would
// not see, the whole title within w cells.
func fitsOneLine(args, title string, w int) bool {
	return !strings.Contains(args, "\n") && engine.ShowSpaces(args) == args && ansi.StringWidth(title) <= w
}

// callLines renders a call's arguments for the pause bar, w cells wide:
// each top-level argument in the order the model gave them, a string one
// as its text (its lines kept: a file's content, a script), anything else
// as JSON, every line wrapped, nothing cut. Arguments that are not a JSON
// object are shown as they came.
func callLines(args json.RawMessage, w int) []string {
	w = max(w, 10)
	var out []string
	add := func(s string, indent string) {
		for _, l := range strings.Split(s, "\n") {
			for _, r := range wrapRows(Sanitize(showLine(l)), w-len(indent)) {
				out = append(out, indent+r)
			}
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(args)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		add(string(args), "")
		return out
	}
	for dec.More() {
		t, err := dec.Token()
		var v json.RawMessage
		if err == nil {
			err = dec.Decode(&v)
		}
		if err != nil {
			add(string(args), "") // not what it seemed: all of it, raw
			return out
		}
		k := fmt.Sprint(t)
		var str string
		if json.Unmarshal(v, &str) == nil && !strings.Contains(str, "\n") && ansi.StringWidth(k+": "+str) <= w {
			add(k+": "+str, "")
			continue
		}
		out = append(out, styleDim.Render(Sanitize(engine.OneLine(k, w))+":"))
		if json.Unmarshal(v, &str) == nil {
			add(str, "  ")
		} else {
			add(string(v), "  ")
		}
	}
	return out
}

// pauseScrolls reports whether the pause bar shows a call's arguments a
// part at a time.
func (m *Model) pauseScrolls() bool {
	return m.pause.pending.ToolCall != nil && m.barLines() > 0 && len(m.pause.argLines(m.width-4)) > m.barLines()
}

// showLine is a line of an argument for a person to approve: its leading
// indentation as it is (tabs as four spaces) when it is a code file's, up
// to 24 columns; past that, and in the rest of the line, what could hide
// text (runs of spaces, tabs, carriage returns) made visible.
func showLine(l string) string {
	rest := strings.TrimLeft(l, " \t")
	lead := l[:len(l)-len(rest)]
	cols := len(strings.ReplaceAll(lead, "\t", "    "))
	if cols > 24 || rest == "" {
		return engine.ShowSpaces(l)
	}
	return strings.Repeat(" ", cols) + engine.ShowSpaces(rest)
}

// barLines is how many argument lines the pause bar may show at once: a
// third of the terminal, within what is left when the panes keep a line,
// the status line its own and the bar its frame; 0 on a terminal too
// small for any, where the bar says so.
//
// The bar's keys take the lines they wrap to, and when the arguments are
// more than the bar shows, the keys say how to scroll them first, which
// may take a line more: the lines are counted with the keys drawn.
func (m *Model) barLines() int {
	base := m.height - 3 /* panes: borders and a line */ - 1 /* status */ - 4 /* the bar: borders, title, keys */
	fit := func(keys string) int {
		room := base - (len(keyLines(keys, m.width-4, base)) - 1)
		return max(0, min(max(3, m.height/3), room))
	}
	if m.pause == nil {
		return fit("")
	}
	keys := pauseKeys[kindOf(m.pause, m.gate.Stepping())]
	if !m.keysArmed() {
		keys = graceNote
	}
	body := fit(keys)
	if m.pause.pending.ToolCall != nil && body >= 1 {
		if n := len(m.pause.argLines(m.width - 4)); n > body {
			body = fit(fmt.Sprintf(scrollKeys, n, n, n) + keys)
		}
	}
	return body
}

// scrollKeys goes before the keys of a pause whose arguments are more than
// the bar shows: the lines shown, of how many.
const scrollKeys = "↑/↓ pgup/pgdn: scroll (lines %d–%d of %d) · "

// pauseKeys says what each key does in each kind of pause.
var pauseKeys = map[pauseKind]string{
	pausedDecide:          "enter: step · i: inspect the request · c: run to the end without step pauses · esc: abort the run",
	pausedCall:            "enter: run it · c: run to the end · e: edit · m: answer for the tool · s: skip · n: deny · esc: abort",
	pausedApprove:         "enter/y: approve · a: allow for this session · e: edit · m: answer for the tool · s: skip · n: deny · esc: abort",
	pausedApproveStepping: "enter/y: approve · a: allow for this session · c: approve, run to the end · e: edit · m: answer for the tool · s: skip · n: deny · esc: abort",
	pausedRerun:           "enter/n: leave it unrun (answered as interrupted) · R: run it again (it may repeat what it did) · e: edit, then run · m: answer for the tool · esc: abort",
}

// keyLines is the pause bar's keys at width w: up to three lines where
// the bar has room for arguments (body), else one, cut.
func keyLines(keys string, w, body int) []string {
	if l := wrapKeys(keys, w); body >= 1 && len(l) <= 3 {
		return l
	}
	return []string{keys}
}

// wrapKeys breaks a line of keys at its " · " to lines of w cells: no
// key's help is cut off.
func wrapKeys(keys string, w int) []string {
	var out []string
	cur := ""
	for _, part := range strings.Split(keys, " · ") {
		switch {
		case cur == "":
			cur = part
		case ansi.StringWidth(cur+" · "+part) <= w:
			cur += " · " + part
		default:
			out = append(out, cur)
			cur = part
		}
	}
	return append(out, cur)
}

// pauseKey answers the gate as the key asks.
func (m *Model) pauseKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch {
	case key.Matches(msg, m.keys.Up):
		m.pause.scroll = max(m.pause.scroll-1, 0)
		return m, nil
	case key.Matches(msg, m.keys.Down), key.Matches(msg, m.keys.PageDown), key.Matches(msg, m.keys.PageUp):
		if m.pause.pending.ToolCall != nil {
			n, step := len(m.pause.argLines(m.width-4)), 1
			if !key.Matches(msg, m.keys.Down) {
				step = max(m.barLines()-1, 1) // a page, the last line kept
			}
			if key.Matches(msg, m.keys.PageUp) {
				step = -step
			}
			m.pause.scroll = min(max(m.pause.scroll+step, 0), max(n-m.barLines(), 0))
		}
		return m, nil
	}
	a := m.pause.update(msg, m.keys, m.gate.Stepping())
	switch {
	case a.edit:
		m.argsEditor = newArgsEditor(m.pause.pending.ToolCall, m.width, m.height, m.validator())
		return m, textarea.Blink
	case a.respond:
		m.argsEditor = newTextEditor(editRespond, m.pause.pending.ToolCall.Name, "", m.width, m.height)
		return m, textarea.Blink
	case a.inspect && m.pause.pending.Request == nil:
		// A run elsewhere sends its request with the pause only when it
		// fits in one message.
		m.note = "The request of this decision did not come with the pause: the run is elsewhere, and its request was too large to send (or its worker is older than this console)."
		return m, nil
	case a.inspect:
		m.inspector = m.newInspector()
		return m, nil
	case a.verdict == nil:
		return m, nil
	case a.verdict.By == "you, for this session":
		what := m.gate.Allow(m.pause.pending)
		cmd := m.reply(*a.verdict)
		m.note = "Allowed for this session: " + what + " (/permissions lists and revokes)"
		return m, cmd
	case a.verdict.Action == engine.Proceed && !m.pause.edit.Empty():
		e := m.pause.edit
		a.verdict.Edit = &e
	case a.release:
		// The whole top-level run goes on without step pauses, its
		// sub-runs with it, even when c is pressed at a sub-run's pause.
		run := m.pause.pending.Run
		if m.pause.pending.ParentRun != "" && m.sess.LastRun().ID != "" {
			run = m.sess.LastRun().ID
		}
		m.gate.Release(run)
		m.released = true
	}
	return m, m.reply(*a.verdict)
}

// reply hands the verdict to the paused run.
func (m *Model) reply(v engine.Verdict) tea.Cmd {
	m.pause.reply <- v // buffered: the gate waits for one verdict
	m.pause, m.inspector = nil, nil
	m.note = "" // what it said was of the pause
	m.state = "thinking"
	defer m.layout()       // the input box is back, or another pause's bar
	if len(m.pauses) > 0 { // the next pause of a parallel sub-run
		next := m.pauses[0]
		m.pauses = m.pauses[1:]
		m.state = "paused"
		return m.showPause(&next)
	}
	return m.spin.Tick
}
