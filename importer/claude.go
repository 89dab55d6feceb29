package importer

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// maxLine bounds one line of a transcript (a tool result may be large).
const maxLine = 16 << 20

// claudeLine is a line of a Claude Code transcript.
type claudeLine struct {
	Type        string          `json:"type"`
	UUID        string          `json:"uuid"`
	ParentUUID  string          `json:"parentUuid"`
	IsSidechain bool            `json:"isSidechain"`
	Timestamp   time.Time       `json:"timestamp"`
	SessionID   string          `json:"sessionId"`
	Cwd         string          `json:"cwd"`
	Message     json.RawMessage `json:"message"`
	line        int
}

// claudeMessage is a line's message, in the Anthropic Messages shape.
type claudeMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *struct {
		Input      int `json:"input_tokens"`
		Output     int `json:"output_tokens"`
		CacheRead  int `json:"cache_read_input_tokens"`
		CacheWrite int `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

// claudeBlock is a content block.
type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// ReadClaude reads a Claude Code transcript. A line that cannot be read is
// a note naming it; the conversation is the live chain (from the last
// message back through parentUuid): messages of other branches (a
// conversation rewound) and of sub-agents (isSidechain) are counted in a
// note.
func ReadClaude(r io.Reader, name string) (*Transcript, error) {
	t := &Transcript{Source: "claude", Results: map[string]Result{}}
	byID := map[string]*claudeLine{}
	var order []*claudeLine
	err := eachLine(r, name, &t.Notes, func(n int, b []byte) {
		var l claudeLine
		if err := json.Unmarshal(b, &l); err != nil {
			t.Notes = append(t.Notes, fmt.Sprintf("%s:%d: not read: %v", name, n, err))
			return
		}
		if l.Type != "user" && l.Type != "assistant" || l.UUID == "" {
			return // summaries, system lines, snapshots
		}
		l.line = n
		byID[l.UUID] = &l
		order = append(order, &l)
		t.ID, t.Cwd = cmpOr(l.SessionID, t.ID), cmpOr(l.Cwd, t.Cwd)
	})
	if err != nil {
		return nil, err
	}
	chain := liveChain(order, byID)
	if left := len(order) - len(chain); left > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%s: %d messages of other branches or of sub-agents are not on the conversation's live chain; not imported", name, left))
	}
	for _, l := range chain {
		if err := t.addClaude(l, name); err != nil {
			t.Notes = append(t.Notes, err.Error())
		}
	}
	return t, nil
}

// liveChain is the conversation that was left: from the last message that
// is not a sub-agent's, back through parentUuid, in order.
func liveChain(order []*claudeLine, byID map[string]*claudeLine) []*claudeLine {
	var last *claudeLine
	for i := len(order) - 1; i >= 0 && last == nil; i-- {
		if !order[i].IsSidechain {
			last = order[i]
		}
	}
	var chain []*claudeLine
	seen := map[string]bool{}
	for l := last; l != nil && !seen[l.UUID]; l = byID[l.ParentUUID] {
		seen[l.UUID] = true
		chain = append(chain, l)
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain
}

// addClaude adds a line of the live chain: a person's text starts a run,
// tool results are kept, an assistant's blocks join the run's decision of
// the same message id.
func (t *Transcript) addClaude(l *claudeLine, name string) error {
	var m claudeMessage
	if err := json.Unmarshal(l.Message, &m); err != nil {
		return fmt.Errorf("%s:%d: message not read: %v", name, l.line, err)
	}
	blocks, text := contentBlocks(m.Content)
	if l.Type == "user" {
		for _, b := range blocks {
			if b.Type == "tool_result" {
				res, _ := blocksText(b.Content)
				t.Results[b.ToolUseID] = Result{Text: res, IsError: b.IsError, At: l.Timestamp}
			}
		}
		if text != "" && !strings.HasPrefix(text, "[Request interrupted by user") { // Claude Code's mark, not the person's words
			t.Runs = append(t.Runs, Run{Task: text, At: l.Timestamp})
		}
		return nil
	}
	if len(t.Runs) == 0 {
		return fmt.Errorf("%s:%d: an assistant's message before any of the person's; not imported", name, l.line)
	}
	t.Model = cmpOr(m.Model, t.Model)
	run := &t.Runs[len(t.Runs)-1]
	if n := len(run.Turns); n == 0 || run.Turns[n-1].id != m.ID || m.ID == "" {
		run.Turns = append(run.Turns, Turn{At: l.Timestamp, id: m.ID})
	}
	turn := &run.Turns[len(run.Turns)-1]
	for _, b := range blocks {
		switch b.Type {
		case "tool_use":
			name, args := importedCall(b.Name, argsOf(b.Input))
			turn.Calls = append(turn.Calls, engine.ToolCall{ID: b.ID, Name: name, Args: args})
		case "thinking":
			turn.Reasoning += b.Thinking
		}
	}
	turn.Text += text
	if u := m.Usage; u != nil {
		turn.Usage = engine.Usage{PromptTokens: u.Input + u.CacheRead + u.CacheWrite, CompletionTokens: u.Output, CachedTokens: u.CacheRead}
	}
	return nil
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
