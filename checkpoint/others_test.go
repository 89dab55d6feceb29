package checkpoint_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentty/agentty/checkpoint"
	"github.com/agentty/agentty/engine"
)

// TestRewindAsksBeforeTakingOtherSessionsWork: two sessions share a
// workspace. Session A writes mine.txt; session B then makes theirs.txt
// (git) or edits mine.txt (files: only the files A's tools name are
// kept); A's next step's checkpoint sees it. A rewind of A to before its
// first step would take B's work away: the plan names the file, B and its
// step, and Apply refuses it until told; what B changed before the state
// restored is not B's loss. B's change is not counted as A's own (Made).
func TestRewindAsksBeforeTakingOtherSessionsWork(t *testing.T) {
	for _, mode := range []string{"git", "files"} {
		t.Run(mode, func(t *testing.T) {
			ws := t.TempDir()
			theirs := "theirs.txt"
			if mode == "git" {
				ws, _ = repo(t)
			} else {
				theirs = "mine.txt"
			}
			s, _ := checkpoint.Open(t.TempDir(), ws, 0)
			t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
			at := func(session, reason string, step int, minute int, path string) checkpoint.Point {
				t.Helper()
				var calls []engine.ToolCall
				if path != "" {
					calls = []engine.ToolCall{{Name: "write_file", Args: []byte(`{"path":"` + path + `"}`)}}
				}
				cp, err := s.Checkpoint(context.Background(), session, reason, calls)
				if err != nil {
					t.Fatal(err)
				}
				return checkpoint.Point{Step: step, Time: t0.Add(time.Duration(minute) * time.Minute), Checkpointed: cp}
			}
			a := []checkpoint.Point{at("0mx2sess", engine.CheckpointBefore, 1, 0, "mine.txt")}
			write(t, filepath.Join(ws, "mine.txt"), "A's\n", 0o644)
			a = append(a, at("0mx2sess", engine.CheckpointAfter, 1, 1, ""))
			b := []checkpoint.Point{at("0other22", engine.CheckpointBefore, 1, 2, theirs)}
			write(t, filepath.Join(ws, theirs), "B's\n", 0o644)
			b = append(b, at("0other22", engine.CheckpointAfter, 1, 3, ""))
			a = append(a, at("0mx2sess", engine.CheckpointBefore, 2, 4, "mine.txt"), at("0mx2sess", engine.CheckpointAfter, 2, 5, ""))

			for _, c := range checkpoint.Made("0mx2sess", a) {
				if c.Path == theirs && mode == "git" {
					t.Errorf("B's file is counted as A's own: %v", c)
				}
			}
			to, err := checkpoint.At(a, 1)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := s.Plan(context.Background(), "0mx2sess", a, to)
			if err != nil {
				t.Fatal(err)
			}
			plan.Theirs("0mx2sess", append(checkpoint.Made("0other22", b), checkpoint.Made("0mx2sess", a)...))
			if len(plan.Others) != 1 || plan.Others[0].String() != theirs+" (session 0other22, step 1)" {
				t.Fatalf("others: %v (plan writes %v, removes %v)", plan.Others, plan.Write, plan.Remove)
			}
			var oe *checkpoint.OthersError
			if err := s.Apply(context.Background(), "0mx2sess", plan, true); !errors.As(err, &oe) || oe.Files[0].Path != theirs {
				t.Fatalf("a rewind over B's work, not told: %v", err)
			}
			if b, _ := os.ReadFile(filepath.Join(ws, theirs)); string(b) != "B's\n" {
				t.Fatalf("B's work was taken: %q", b)
			}
			// B's change before the state restored is not in question.
			later := *plan
			later.To.Time = t0.Add(10 * time.Minute)
			later.Theirs("0mx2sess", checkpoint.Made("0other22", b))
			if len(later.Others) != 0 {
				t.Errorf("a change before the state restored: %v", later.Others)
			}
			if err := s.ApplyOver(context.Background(), "0mx2sess", plan, true, true); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(ws, "mine.txt")); err == nil {
				t.Error("told, the rewind left mine.txt")
			}
		})
	}
}
