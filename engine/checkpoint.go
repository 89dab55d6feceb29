package engine

import (
	"context"
	"slices"
	"time"
)

// Checkpoints: before a step whose tools may change the workspace (a tool
// with Changes), the engine asks the Config's Checkpointer to keep the
// workspace as it is and journals what it kept (checkpoint), before the
// first tool_started of those calls: a crash mid-tool still has the
// "before". A run that took one takes another when it ends ("after"), so
// that the last step's changes are known too. Diff, rewind and forks in
// worktrees read them (package checkpoint).

// Checkpoint reasons.
const (
	CheckpointBefore = "before" // a step's tools, which may change the workspace
	CheckpointAfter  = "after"  // the end of a run that took a checkpoint
	CheckpointRewind = "rewind" // the workspace before a rewind (its undo)
)

// Checkpointed is the payload of checkpoint: the workspace as a
// Checkpointer kept it.
type Checkpointed struct {
	Reason string `json:"reason"`
	// Mode is "git" (the whole working tree, .gitignore respected, as a
	// tree in agentty's own store: Tree) or "files" (the files the file
	// tools name, as they were: outside a git repository).
	Mode  string           `json:"mode"`
	Tree  string           `json:"tree,omitempty"`
	Files []CheckpointFile `json:"files,omitempty"`
	// Changed are the files that differ from the session's previous
	// checkpoint: what the steps since then changed.
	Changed []string `json:"changed,omitempty"`
	// Skipped are files left out (larger than the limit).
	Skipped []string `json:"skipped,omitempty"`
	// Special are files left out as they are not files git or agentty can
	// keep (a FIFO, a socket, a device in the place of a file).
	Special []string `json:"special,omitempty"`
	// Where is the host and folder the checkpoint was taken in.
	Where string `json:"where,omitempty"`
	// RewoundTo is, for a rewind's checkpoint, the tree the rewind
	// restored (what the workspace held after it).
	RewoundTo string `json:"rewound_to,omitempty"`
	// Restored are, for a files-mode rewind's checkpoint, the files as
	// the rewind left them.
	Restored []CheckpointFile `json:"restored,omitempty"`
	Note     string           `json:"note,omitempty"`
}

// CheckpointFile is a file as a files-mode checkpoint kept it: its content
// (by hash, in the store) and mode, or that it did not exist.
type CheckpointFile struct {
	Path    string `json:"path"`
	Hash    string `json:"hash,omitempty"`
	Mode    uint32 `json:"mode,omitempty"`
	Missing bool   `json:"missing,omitempty"`
}

// Checkpointer keeps the workspace of a session's runs. Checkpoint may do
// I/O and start processes (git); it is called from the run's goroutine and
// from sub-runs' at once, so it must be safe for concurrent use. calls are
// the step's calls about to run (nil for an "after").
type Checkpointer interface {
	Checkpoint(ctx context.Context, session, reason string, calls []ToolCall) (*Checkpointed, error)
}

// checkpointTimeout bounds one checkpoint.
const checkpointTimeout = 2 * time.Minute

// checkpoint journals a checkpoint before jobs run, when one of their
// tools may change the workspace. A checkpoint that fails is said in a
// notice; the tools run all the same (the person approved them).
func (r *run) checkpoint(ctx context.Context, jobs []toolJob) error {
	cp := r.e.cfg.Checkpoint
	if cp == nil {
		return nil
	}
	if !slices.ContainsFunc(jobs, func(j toolJob) bool { return j.tool.Changes }) {
		return nil // most steps: nothing allocated
	}
	calls := make([]ToolCall, len(jobs))
	for i := range jobs {
		calls[i] = jobs[i].call
	}
	r.checkpointed = true
	return r.takeCheckpoint(ctx, CheckpointBefore, calls)
}

// takeCheckpoint asks the Checkpointer and journals what it kept, or a
// notice of why it could not.
func (r *run) takeCheckpoint(ctx context.Context, reason string, calls []ToolCall) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkpointTimeout)
	defer cancel()
	c, err := r.e.cfg.Checkpoint.Checkpoint(ctx, r.s.ID, reason, calls)
	if err != nil {
		return r.emit(Act, KindNotice, &Notice{Level: "warn", About: NoticeCheckpoint,
			Message: "checkpoint: " + err.Error() + " (the step goes on without one: a rewind cannot go back to before it)"})
	}
	c.Reason = reason
	return r.emit(Act, KindCheckpoint, c)
}

// Record journals an event made outside a run (a rewind's checkpoint) and
// applies it to the session; ErrBusy while a run is going.
func (s *Session) Record(kind Kind, data any, sink Sink) (Event, error) {
	if !s.busy.CompareAndSwap(false, true) {
		return Event{}, ErrBusy
	}
	defer s.busy.Store(false)
	ev := Event{V: SchemaVersion, Session: s.ID, Run: s.run.ID, Agent: s.Agent, Step: s.Steps, Kind: kind, Time: time.Now(), Data: data}
	if err := emitOutside(ev, sink); err != nil {
		return Event{}, err
	}
	return ev, s.Apply(ev)
}
