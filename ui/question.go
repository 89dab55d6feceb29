package ui

import (
	"fmt"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentty/agentty/engine"
)

// A question of the run (ask_user) is a pause like the others: the pause
// bar shows it, with its choices, and the answer is typed there; enter
// sends it (a choice's number stands for the choice, nothing for the
// default), esc leaves it unanswered.

// questionBar draws a question in place of the input box, w cells wide.
func (p *gateRequest) questionBar(q *engine.Question, w int, armed bool) []string {
	var lines []string
	for _, r := range wrapRows("? "+Sanitize(engine.OneLine(q.Question, 400))+p.tag(), w-4) {
		lines = append(lines, stylePause.Render(r))
	}
	var choices []string
	for i, c := range q.Choices {
		choices = append(choices, fmt.Sprintf("%d. %s", i+1, flatten(Sanitize(c))))
	}
	if len(choices) > 0 {
		lines = append(lines, wrapRows(strings.Join(choices, "   "), w-4)...)
	}
	typed := Sanitize(string(p.answer))
	if room := w - 8; ansi.StringWidth(typed) > room { // its end, where the person types
		typed = "…" + ansi.TruncateLeft(typed, ansi.StringWidth(typed)-room+1, "")
	}
	answer := "> " + typed + "▏"
	if len(p.answer) == 0 && q.Default != "" {
		answer += styleDim.Render(" (enter: " + flatten(Sanitize(q.Default)) + ")")
	}
	lines = append(lines, answer)
	keys := "type the answer · enter: send · esc: leave it unanswered · ctrl+c: cancel the run"
	if !armed {
		keys = graceNote
	}
	for _, k := range wrapKeys(keys, w-4) {
		lines = append(lines, styleDim.Render(k))
	}
	return box("The agent asks", true, w, len(lines), lines, false)
}

// questionKey takes a key at a question: the answer's text, enter, esc.
// ok is false for a key it leaves to the others (ctrl+c), and when no
// question is asked.
func (m *Model) questionKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	p := m.pause
	if p == nil || p.pending.Question == nil {
		return nil, false
	}
	switch msg.Type {
	case tea.KeyEnter:
		return m.reply(engine.Verdict{Action: engine.Proceed, Answer: chosen(p.pending.Question, string(p.answer)), By: "the console"}), true
	case tea.KeyEsc:
		return m.reply(engine.Verdict{Action: engine.Deny}), true
	case tea.KeyBackspace:
		if len(p.answer) > 0 {
			p.answer = p.answer[:len(p.answer)-1]
		}
		return nil, true
	case tea.KeySpace:
		p.answer = append(p.answer, ' ')
		return nil, true
	case tea.KeyRunes:
		p.answer = append(p.answer, msg.Runes...)
		return nil, true
	}
	return nil, false
}

// chosen is the answer typed: a choice's number stands for the choice,
// nothing for the default.
func chosen(q *engine.Question, typed string) string {
	typed = strings.TrimSpace(typed)
	if n, err := strconv.Atoi(typed); err == nil && n >= 1 && n <= len(q.Choices) {
		return q.Choices[n-1]
	}
	if typed == "" {
		return q.Default
	}
	return typed
}
