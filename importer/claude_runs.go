package importer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentty/agentty/engine"
)

// claudeBuilder makes runs of the chain's lines as the second read hands
// them over, and gives each run to emit once the next begins (or the
// transcript ends): one run is held at a time.
type claudeBuilder struct {
	name    string
	emit    func(*Run) error
	run     *Run
	results map[string]Result // results read, not yet given with their run
	command string            // a custom command the person ran, its run begun when the model answers it
	subTask string            // a sub-agent's transcript: the task its first run stands for
	notes   []string
	err     error
	compact int
}

// line takes one line: of the chain (onChain), or one that holds results
// of its calls and nothing else of the conversation.
func (b *claudeBuilder) line(n int, raw []byte, onChain bool) {
	var l claudeLine
	if err := json.Unmarshal(raw, &l); err != nil {
		return // said by the first read
	}
	l.line = n
	if l.Type != "user" && l.Type != "assistant" {
		return // system, progress, attachment: the chain's, not the conversation's
	}
	var m claudeMessage
	if err := json.Unmarshal(l.Message, &m); err != nil {
		b.notes = append(b.notes, fmt.Sprintf("%s:%d: message not read: %v", b.name, n, err))
		return
	}
	blocks, text := contentBlocks(m.Content)
	if l.Type == "user" {
		b.results1(blocks, &l)
		if onChain {
			b.prompt(text, &l)
		}
		return
	}
	if onChain {
		b.answer(&m, blocks, text, &l)
	}
}

// results1 keeps a user line's tool results.
func (b *claudeBuilder) results1(blocks []claudeBlock, l *claudeLine) {
	for _, bl := range blocks {
		if bl.Type == "tool_result" {
			res, _ := blocksText(bl.Content)
			b.results[bl.ToolUseID] = Result{Text: res, IsError: bl.IsError, At: l.Timestamp}
		}
	}
}

// commandTag reads Claude Code's record of a slash command the person ran:
// <command-name>/review</command-name> … <command-args>main.go</command-args>.
var commandTag = regexp.MustCompile(`(?s)<command-name>\s*(.*?)\s*</command-name>.*?(?:<command-args>(.*?)</command-args>|$)`)

// prompt takes a person's line: their words start a run. What Claude Code
// wrote in their place is not: meta lines (the local-command caveat, a
// custom command's expansion), a command's record and its output, an
// interruption mark, a compaction's summary.
func (b *claudeBuilder) prompt(text string, l *claudeLine) {
	trimmed := strings.TrimSpace(text)
	switch {
	case trimmed == "" || l.IsMeta:
	case l.IsCompactSummary:
		b.compact++
	case strings.HasPrefix(trimmed, "[Request interrupted by user"):
	case strings.HasPrefix(trimmed, "<local-command-stdout>"), strings.HasPrefix(trimmed, "<local-command-stderr>"):
		b.command = "" // a built-in command: it ran in Claude Code, not the model
	case strings.HasPrefix(trimmed, "<command-name>"), strings.HasPrefix(trimmed, "<command-message>"):
		if m := commandTag.FindStringSubmatch(trimmed); m != nil {
			b.command = strings.TrimSpace(m[1] + " " + strings.TrimSpace(m[2]))
		}
	default:
		b.command = ""
		b.start(text, l)
	}
}

// start gives the run held to emit and begins the next.
func (b *claudeBuilder) start(task string, l *claudeLine) {
	if b.err = b.flush(); b.err != nil {
		return
	}
	b.run = &Run{Task: task, At: l.Timestamp}
}

// flush gives the run held, if any, to emit, with the results of its calls.
func (b *claudeBuilder) flush() error {
	if b.run == nil {
		return nil
	}
	run := b.run
	b.run = nil
	keep := map[string]Result{}
	for _, t := range run.Turns {
		for _, c := range t.Calls {
			if r, ok := b.results[c.ID]; ok {
				keep[c.ID] = r
			}
		}
	}
	run.Results = keep
	clear(b.results) // a result no call of the run claims has no call to come: nothing is held past its run
	if b.compact > 0 {
		b.notes = append(b.notes, fmt.Sprintf("%s: %d compaction summaries of Claude Code's are not the person's words; the conversation before them is imported whole", b.name, b.compact))
		b.compact = 0
	}
	return b.emit(run)
}

// answer adds an assistant's line: its blocks join the run's decision of
// the same message id.
func (b *claudeBuilder) answer(m *claudeMessage, blocks []claudeBlock, text string, l *claudeLine) {
	if b.run == nil && b.command != "" {
		b.start(b.command, l) // the model answers a custom command: the command was the person's words
		b.command = ""
	}
	if b.run == nil && b.subTask != "" {
		b.start(b.subTask, l) // a sub-agent's transcript that begins with its answer: its task was the parent's Task call
	}
	if b.run == nil {
		b.notes = append(b.notes, fmt.Sprintf("%s:%d: an assistant's message before any of the person's; not imported", b.name, l.line))
		return
	}
	b.command = ""
	run := b.run
	run.Model = cmpOr(m.Model, run.Model)
	if n := len(run.Turns); n == 0 || run.Turns[n-1].id != m.ID || m.ID == "" {
		run.Turns = append(run.Turns, Turn{At: l.Timestamp, id: m.ID})
	}
	turn := &run.Turns[len(run.Turns)-1]
	for _, bl := range blocks {
		switch bl.Type {
		case "tool_use":
			name, args := importedCall(bl.Name, argsOf(bl.Input))
			turn.Calls = append(turn.Calls, engine.ToolCall{ID: bl.ID, Name: name, Args: args})
		case "thinking":
			turn.Reasoning += bl.Thinking
		}
	}
	turn.Text += text
	if u := m.Usage; u != nil {
		turn.Usage = engine.Usage{PromptTokens: u.Input + u.CacheRead + u.CacheWrite, CompletionTokens: u.Output, CachedTokens: u.CacheRead}
	}
}

// contentBlocks reads a message's content: a string, or blocks; text is
// its text blocks' text.
func contentBlocks(raw json.RawMessage) ([]claudeBlock, string) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return nil, s
	}
	var blocks []claudeBlock
	json.Unmarshal(raw, &blocks)
	var text []string
	for _, b := range blocks {
		if b.Type == "text" && b.Text != "" {
			text = append(text, b.Text)
		}
	}
	return blocks, strings.Join(text, "\n")
}

// blocksText is a tool result's content as text.
func blocksText(raw json.RawMessage) (string, bool) {
	blocks, text := contentBlocks(raw)
	return text, len(blocks) > 0 || text != ""
}

// argsOf is a call's arguments: an object (null is an empty one).
func argsOf(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`)
	}
	return raw
}
