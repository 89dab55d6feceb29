package checkpoint

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentty/agentty/engine"
)

// What checkpoints could not keep, said wherever they are shown: files left
// out (over the size limit, or not regular files) and checkpoints that
// failed.

// RedactWith makes the store take secrets out of what it shows: its
// diffs, and what Shown is given (file names, notes). The store itself
// keeps the files as they were, secrets and all: a rewind must restore
// them byte for byte. Call it before the store is used.
func (s *Store) RedactWith(redact func(string) string) { s.redact = redact }

// Shown is text as the store shows it: without the secrets RedactWith
// named.
func (s *Store) Shown(text string) string {
	if s.redact == nil {
		return text
	}
	return s.redact(text)
}

// Notes says what a checkpoint left out, one sentence a kind.
func Notes(cp *engine.Checkpointed, maxFile int64) []string {
	var notes []string
	if len(cp.Skipped) > 0 {
		notes = append(notes, fmt.Sprintf("left out of the checkpoint, over the %s limit: %s", sizeOf(maxFile), strings.Join(cp.Skipped, ", ")))
	}
	if len(cp.Special) > 0 {
		notes = append(notes, "left out of the checkpoint, not a regular file (a FIFO, a socket or a device): "+strings.Join(cp.Special, ", "))
	}
	return notes
}

// sizeOf is a size limit in words.
func sizeOf(n int64) string {
	if n <= 0 {
		n = DefaultMaxFile
	}
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d-byte", n)
}

// LeftOut says which files the session's checkpoints do not hold, so that
// a diff does not show their changes and a rewind does not restore them:
// those its checkpoints left out (over the size limit, or not regular
// files) and, in git mode, those the store keeps out of every checkpoint
// of the workspace (over the limit once) that are in it now.
func (s *Store) LeftOut(points []Point) []string {
	var big, special []string
	add := func(list *[]string, paths []string) {
		for _, p := range paths {
			if !slices.Contains(*list, p) {
				*list = append(*list, p)
			}
		}
	}
	for _, p := range points {
		add(&big, p.Skipped)
		add(&special, p.Special)
	}
	if s.git {
		add(&big, s.excludedBig())
	}
	slices.Sort(big)
	slices.Sort(special)
	var notes []string
	if len(big) > 0 {
		notes = append(notes, fmt.Sprintf("over the %s limit of checkpoints, so left out of them (the diff does not show their changes, a rewind does not restore them): %s",
			sizeOf(s.maxFile), strings.Join(big, ", ")))
	}
	if len(special) > 0 {
		notes = append(notes, "not a regular file (a FIFO, a socket or a device) when checkpointed, so left out (the diff does not show their changes, a rewind does not restore them): "+strings.Join(special, ", "))
	}
	return notes
}

// excludedBig are the files the store keeps out of its checkpoints as over
// the size limit (its info/exclude, leaveOut's lines) that the workspace
// holds now.
func (s *Store) excludedBig() []string {
	f, err := os.Open(filepath.Join(s.gitDir, "info", "exclude"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "/") || strings.HasSuffix(l, "/") { // a folder: the data folder's own line
			continue
		}
		p := globUnescape.Replace(strings.TrimPrefix(l, "/"))
		if fi, err := os.Lstat(filepath.Join(s.ws, filepath.FromSlash(p))); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	return out
}

// globUnescape undoes globEscape.
var globUnescape = strings.NewReplacer(`\\`, `\`, `\*`, "*", `\?`, "?", `\[`, "[", `\!`, "!", `\#`, "#", `\ `, " ")

// Failure is a checkpoint that could not be taken: the step's tools ran
// with no "before" to rewind to.
type Failure struct {
	Step    int
	Message string
}

func (f Failure) String() string { return fmt.Sprintf("step %d: %s", f.Step, f.Message) }

// Failures reads a session's failed checkpoints from its events.
func Failures(events []engine.Event) []Failure {
	var out []Failure
	for _, ev := range events {
		if n, ok := ev.Data.(*engine.Notice); ok && n.About == engine.NoticeCheckpoint {
			out = append(out, Failure{Step: ev.Step, Message: n.Message})
		}
	}
	return out
}

// NoneKept is the error of a session with no checkpoint: none was
// needed, or every one failed (fails).
func NoneKept(id string, fails []Failure) error {
	if len(fails) == 0 {
		return fmt.Errorf("session %s has no checkpoints: no step of it changed the workspace (or it ran before agentty kept them)", id)
	}
	return fmt.Errorf("session %s has no checkpoints: %d %s failed, the last at %s", id, len(fails), engine.Plural(len(fails), "checkpoint"), fails[len(fails)-1])
}

// Gap refuses a rewind to before step at when to, the nearest checkpoint
// kept, is of a later step and a checkpoint between failed: the files as
// they were before at are not kept. Outside git (to has no tree) each file
// comes from the first checkpoint from at on that kept it, so a failure at
// any step from at on may have lost a file's state before at.
func Gap(fails []Failure, at int, to State) error {
	files := to.Tree == ""
	for _, f := range fails {
		if f.Step >= at && (files || to.Step > 0 && f.Step < to.Step) {
			return fmt.Errorf("%w: the checkpoint before step %d failed (%s), so the files as they were before step %d are not kept", ErrNoCheckpoint, f.Step, f.Message, at)
		}
	}
	return nil
}
