package importer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// maxLine bounds one line of a transcript (a tool result may be large).
const maxLine = 16 << 20

// claudeHead is what the first read keeps of a line of a Claude Code
// transcript: where it sits on the chain, and the ids of the calls it
// makes or answers. Every line with a uuid is on the chain, whatever its
// type (Claude Code 2.x writes system, progress and attachment lines
// between the messages); after /compact the chain goes on through
// logicalParentUuid.
type claudeHead struct {
	Type          string `json:"type"`
	UUID          string `json:"uuid"`
	ParentUUID    string `json:"parentUuid"`
	LogicalParent string `json:"logicalParentUuid"`
	IsSidechain   bool   `json:"isSidechain"`
	SessionID     string `json:"sessionId"`
	AgentID       string `json:"agentId"`
	Cwd           string `json:"cwd"`
	Message       struct {
		Model   string `json:"model"`
		Content json.RawMessage
	} `json:"message"`
	line int
}

// claudeLine is a line of the chain as the second read takes it whole.
type claudeLine struct {
	Type             string          `json:"type"`
	IsMeta           bool            `json:"isMeta"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	Timestamp        time.Time       `json:"timestamp"`
	Message          json.RawMessage `json:"message"`
	line             int
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

// blockIDs is a content block as the first read takes it: its ids only.
type blockIDs struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	ToolUseID string `json:"tool_use_id"`
}

// ReadClaude reads a Claude Code transcript's chain: the live
// conversation, from its last line back through parentUuid (and across a
// compaction, logicalParentUuid), and for each call on it the line that
// holds its result (parallel calls' results hang off their own lines, a
// branch each). A line that cannot be read is a note naming it; messages
// of other branches (a conversation rewound) are counted in a note. Import
// reads the lines of the chain again, a run at a time.
func ReadClaude(r io.ReadSeeker, name string) (*Transcript, error) {
	t := &Transcript{Source: "claude"}
	c := &claudeChain{byID: map[string]*claudeNode{}, resultAt: map[string]int{}}
	h := sha256.New()
	err := eachLine(io.TeeReader(r, h), name, &t.Notes, func(n int, b []byte) {
		var h claudeHead
		if err := json.Unmarshal(b, &h); err != nil {
			t.Notes = append(t.Notes, fmt.Sprintf("%s:%d: not read: %v", name, n, err))
			return
		}
		if len(h.UUID) > maxID || len(h.ParentUUID) > maxID || len(h.LogicalParent) > maxID {
			t.Notes = append(t.Notes, fmt.Sprintf("%s:%d: not read: an id over %d bytes", name, n, maxID))
			return
		}
		h.line = n
		t.ID, t.Cwd = cmpOr(t.ID, short(h.SessionID)), cmpOr(t.Cwd, short(h.Cwd))
		if h.Type == "assistant" {
			t.Model = cmpOr(t.Model, short(h.Message.Model))
		}
		c.add(&h)
	})
	if err != nil {
		return nil, err
	}
	t.Fingerprint = hex.EncodeToString(h.Sum(nil))[:16]
	keep, notes := c.live(name)
	t.Notes = append(t.Notes, notes...)
	if c.subAgent {
		t.Parent = t.ID
		t.Notes = append(t.Notes, fmt.Sprintf("%s: a sub-agent's transcript (agent %s) of Claude Code session %s: imported alone, as a session of its own", name, cmpOr(c.agentID, "?"), cmpOr(t.ID, "?")))
	}
	t.runs = func(ctx context.Context, emit func(*Run) error) error {
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return err
		}
		b := &claudeBuilder{name: name, emit: emit, results: map[string]Result{}}
		if c.subAgent {
			b.subTask = fmt.Sprintf("(the task Claude Code session %s gave its sub-agent %s: in that session's Task call)", cmpOr(t.ID, "?"), cmpOr(c.agentID, "?"))
		}
		err := eachLine(r, name, new([]string), func(n int, line []byte) {
			if onChain, ok := keep[n]; ok && b.err == nil && ctx.Err() == nil {
				b.line(n, line, onChain)
			}
		})
		t.Notes = append(t.Notes, b.notes...)
		if err = firstErr(err, b.err, ctx.Err()); err != nil {
			return err
		}
		return b.flush()
	}
	return t, nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// claudeChain is the first read's account of the lines: a small node for
// each line with a uuid, nothing of its text.
type claudeChain struct {
	byID     map[string]*claudeNode
	last     *claudeNode // the last line with a uuid that is not a sub-agent's
	lastAny  *claudeNode // the last line with a uuid
	resultAt map[string]int
	subAgent bool
	agentID  string
}

// claudeNode is a line on the chain as the first read keeps it.
type claudeNode struct {
	uuid, parent, logical string
	line                  int
	sidechain, assistant  bool
	uses                  []string // an assistant line's tool_use ids
}

// maxID bounds a uuid (and a call's id) the first read keeps: Claude
// Code's are 36 bytes.
const maxID = 128

// short is s when it is no longer than maxID, else "": the first read
// keeps no long text of a line.
func short(s string) string {
	if len(s) > maxID {
		return ""
	}
	return s
}

func (c *claudeChain) add(h *claudeHead) {
	if h.Type == "user" { // a call's id is the call's alone: a sub-agent's results are found by theirs
		for _, id := range callIDs(h.Message.Content, "tool_result") {
			if _, ok := c.resultAt[id]; !ok {
				c.resultAt[id] = h.line
			}
		}
	}
	if h.UUID == "" {
		return // summaries, file snapshots
	}
	n := &claudeNode{uuid: h.UUID, parent: h.ParentUUID, logical: h.LogicalParent, line: h.line, sidechain: h.IsSidechain, assistant: h.Type == "assistant"}
	if n.assistant {
		n.uses = callIDs(h.Message.Content, "tool_use")
	}
	c.byID[n.uuid] = n
	c.lastAny = n
	if !n.sidechain {
		c.last = n
	}
	c.agentID = cmpOr(c.agentID, short(h.AgentID))
}

// live returns the lines to read again: the chain's (true) and the lines
// that hold its calls' results elsewhere (false); and the notes of what is
// left out.
func (c *claudeChain) live(name string) (map[int]bool, []string) {
	from := c.last
	if from == nil && c.lastAny != nil { // every line a sidechain: a sub-agent's own transcript
		from, c.subAgent = c.lastAny, true
	}
	keep := map[int]bool{}
	var uses []string
	seen := map[string]bool{}
	for n := from; n != nil && !seen[n.uuid]; {
		seen[n.uuid] = true
		keep[n.line] = true
		uses = append(uses, n.uses...)
		next := n.parent
		if next == "" {
			next = n.logical // a compaction's boundary
		}
		n = c.byID[next]
	}
	for _, id := range uses {
		if line, ok := c.resultAt[id]; ok && !keep[line] {
			keep[line] = false
		}
	}
	var notes []string
	if left := len(c.byID) - len(seen); left > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d lines of other branches or of sub-agents are not on the conversation's live chain; not imported", name, left))
	}
	return keep, notes
}

// callIDs are the ids of a message's blocks of type kind: tool_use's id,
// tool_result's tool_use_id.
func callIDs(content json.RawMessage, kind string) []string {
	if len(content) == 0 || content[0] != '[' {
		return nil
	}
	var blocks []blockIDs
	json.Unmarshal(content, &blocks)
	var ids []string
	for _, b := range blocks {
		if id := cmpOr(b.ID, b.ToolUseID); b.Type == kind && len(id) <= maxID {
			ids = append(ids, id)
		}
	}
	return ids
}
