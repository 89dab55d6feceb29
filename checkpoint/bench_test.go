package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentty/agentty/checkpoint"
	"github.com/agentty/agentty/engine"
)

// benchRepo is a git repository of n small files in 100 folders.
func benchRepo(b *testing.B, n int) string {
	b.Helper()
	ws := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		b.Fatal(err, string(out))
	}
	for i := range n {
		p := filepath.Join(ws, fmt.Sprintf("dir%02d", i%100), fmt.Sprintf("file%05d.go", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, fmt.Appendf(nil, "package p\n\n// file %d\nfunc F%d() int { return %d }\n", i, i, i), 0o644)
	}
	return ws
}

// BenchmarkCheckpoint: a checkpoint of a 10,000-file repository after a
// step that changed one file (the target: ≤ 30 ms wall). The session's
// index is warm, as between the steps of a run.
func BenchmarkCheckpoint(b *testing.B) {
	ws := benchRepo(b, 10_000)
	s, err := checkpoint.Open(b.TempDir(), ws, 0)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Checkpoint(ctx, "0mx2bench", engine.CheckpointBefore, nil); err != nil {
		b.Fatal(err)
	}
	changed := filepath.Join(ws, "dir07", "file00007.go")
	b.ResetTimer()
	for i := range b.N {
		os.WriteFile(changed, fmt.Appendf(nil, "package p\n\n// step %d\n", i), 0o644)
		cp, err := s.Checkpoint(ctx, "0mx2bench", engine.CheckpointBefore, nil)
		if err != nil || len(cp.Changed) != 1 {
			b.Fatalf("%v, changed %v", err, cp.Changed)
		}
	}
}

// BenchmarkCheckpointUnchanged: a step that changed nothing.
func BenchmarkCheckpointUnchanged(b *testing.B) {
	ws := benchRepo(b, 10_000)
	s, _ := checkpoint.Open(b.TempDir(), ws, 0)
	ctx := context.Background()
	s.Checkpoint(ctx, "0mx2bench", engine.CheckpointBefore, nil)
	b.ResetTimer()
	for range b.N {
		if _, err := s.Checkpoint(ctx, "0mx2bench", engine.CheckpointBefore, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstCheckpoint: a session's first checkpoint of the 10,000-file
// repository, in a store that has none of its files yet.
func BenchmarkFirstCheckpoint(b *testing.B) {
	ws := benchRepo(b, 10_000)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		s, _ := checkpoint.Open(b.TempDir(), ws, 0)
		b.StartTimer()
		if _, err := s.Checkpoint(ctx, "0mx2bench", engine.CheckpointBefore, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSecondSessionFirstCheckpoint: the first checkpoint of a new
// session in a workspace another session checkpointed (its index seeds
// the new one's).
func BenchmarkSecondSessionFirstCheckpoint(b *testing.B) {
	ws := benchRepo(b, 10_000)
	s, _ := checkpoint.Open(b.TempDir(), ws, 0)
	ctx := context.Background()
	s.Checkpoint(ctx, "0mx2first", engine.CheckpointBefore, nil)
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Checkpoint(ctx, fmt.Sprintf("0mx2new%d", i), engine.CheckpointBefore, nil); err != nil {
			b.Fatal(err)
		}
	}
}
