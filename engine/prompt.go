package engine

import (
	"slices"
	"time"
)

// KindPrompt: what a run's requests are asked with besides their messages
// (the system prompt, the project instructions, the tools' schemas),
// journaled before the first model_request that carries its hash, once a
// session. A recording then says what changed since it was made, not only
// that something did (engine/replay).
const KindPrompt Kind = "prompt"

// Prompt is the payload of prompt. Hash is its PromptHash.
type Prompt struct {
	Hash         Hash         `json:"hash"`
	System       string       `json:"system,omitempty"`
	Instructions string       `json:"instructions,omitempty"`
	Tools        []ToolSchema `json:"tools,omitempty"`
}

// recordPrompt journals the run's prompt when its session has not yet:
// a check of one hash a step; a sub-run's or another agent's prompt is
// journaled as it first comes.
func (r *run) recordPrompt(t time.Time, hash Hash, tools []ToolSchema) error {
	if r.promptSeen(hash) {
		return nil
	}
	return r.emitAt(t, Perceive, KindPrompt, &Prompt{Hash: hash, System: r.prof.system, Instructions: r.instructions, Tools: tools})
}

// promptSeen reports whether the session journaled the prompt: the root
// session's, under the tree's lock when sub-runs share it (emitShared
// checks again as it emits, so two sub-runs never both journal one).
func (r *run) promptSeen(hash Hash) bool {
	if r.tree == nil {
		return r.root.journaledPrompt(hash)
	}
	r.tree.mu.Lock()
	defer r.tree.mu.Unlock()
	return r.tree.root.journaledPrompt(hash)
}

// notePrompt remembers that the session journaled a prompt. A session has
// a few (its agents', a changed instruction file's): a list, no map to
// make for every session.
func (s *Session) notePrompt(p *Prompt) {
	if !s.journaledPrompt(p.Hash) {
		s.prompts = append(s.prompts, p.Hash)
	}
}

// journaledPrompt reports whether the session journaled the prompt.
func (s *Session) journaledPrompt(hash Hash) bool {
	return slices.Contains(s.prompts, hash)
}
