package sessions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// A new session is on disk only once something is written to it.
func TestCreateIsLazy(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(store.Dir(), j.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Create made the folder before anything was written: %v", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if list, _ := store.List(); len(list) != 0 {
		t.Errorf("a session never written is listed: %+v", list)
	}
	if entries, _ := os.ReadDir(store.Dir()); len(entries) != 0 {
		t.Errorf("a session never written left %v behind", entries)
	}

	// Written: it is there, locked while open, and reads back.
	j, _ = store.Create()
	e := engine.New(engine.Config{Model: answers{}})
	s := engine.NewSession(j.ID)
	if res := e.Run(context.Background(), s, "hello", j); res.StopReason != engine.StopAnswered {
		t.Fatal(res.Err)
	}
	if _, _, err := store.OpenWriter(j.ID); !errors.Is(err, sessions.ErrLocked) {
		t.Errorf("a second writer of a new session: %v, want ErrLocked", err)
	}
	j.Close()
	l, err := store.Load(j.ID)
	if err != nil || len(l.Events) == 0 || l.Meta.Title != "hello" {
		t.Fatalf("load: %v, %d events, meta %+v", err, len(l.Events), l.Meta)
	}
}

// Resume opens for writing, or read-only with the reason when the session
// is open elsewhere or damaged.
func TestResume(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	j, _ := store.Create()
	e := engine.New(engine.Config{Model: answers{}})
	if res := e.Run(context.Background(), engine.NewSession(j.ID), "hello", j); res.StopReason != engine.StopAnswered {
		t.Fatal(res.Err)
	}
	j.Close()
	id := j.ID

	w, l, why, err := store.Resume(id)
	if err != nil || w == nil || why != "" || len(l.Events) == 0 {
		t.Fatalf("resume: %v %v %q", w, err, why)
	}
	// Open in another agentty: read-only, with the events.
	w2, l2, why, err := store.Resume(id)
	if err != nil || w2 != nil || !strings.Contains(why, "open in another agentty") || len(l2.Events) != len(l.Events) {
		t.Errorf("resume while open: journal %v, why %q, err %v", w2, why, err)
	}
	w.Close()

	// Damaged in the middle: read-only up to the damage, naming the line.
	path := store.JournalPath(id)
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	lines[1] = "{not json\n"
	os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600)
	w3, l3, why, err := store.Resume(id)
	if err != nil || w3 != nil || !strings.Contains(why, "line 2 is corrupt") || l3 == nil {
		t.Errorf("resume damaged: journal %v, why %q, err %v", w3, why, err)
	}

	if _, _, _, err := store.Resume("0nosuchsession"); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("resume of a missing session: %v, want ErrNotFound", err)
	}
}

// answers answers every request with "hi".
type answers struct{}

func (answers) Decide(context.Context, *engine.Request) (engine.Decision, error) {
	return engine.Decision{Text: "hi"}, nil
}
