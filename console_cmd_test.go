package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// TestConsoleCommands: the session backend's slash commands on a real
// store: /model (an unusable name changes nothing), /agent (an unknown
// name lists none), /export to a file, /fork and /clear opening sessions
// of their own that run, /trust recorded, /compact journaled.
func TestConsoleCommands(t *testing.T) {
	env := agentEnv(t)
	getenv := func(k string) string { return env[k] }
	ws := t.TempDir()
	o := options{model: "offline", maxSteps: 5, workspace: ws}
	st, err := build(context.Background(), o, nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	store, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	con := &console{store: store, setup: st, opts: o, getenv: getenv}
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	b := con.open(j, engine.NewSession(j.ID))
	defer b.Close()
	drain := func(ch <-chan engine.Event) (kinds []engine.Kind) {
		for ev := range ch {
			kinds = append(kinds, ev.Kind)
		}
		return kinds
	}
	for _, task := range []string{"what is 17*23?", "remember that my name is Ada", "what is 2+2?"} {
		drain(b.Start(context.Background(), task))
	}

	if _, err := b.SetModel("nope"); err == nil || !strings.Contains(err.Error(), `model "nope"`) || b.ModelName() != "offline" {
		t.Fatalf("/model nope: %v, model %s", err, b.ModelName())
	}
	if _, err := b.SetAgent("critic"); err == nil || !strings.Contains(err.Error(), "there are no agents") {
		t.Fatalf("/agent critic with no agents: %v", err)
	}
	if kinds := drain(b.Compact(context.Background(), "the name")); len(kinds) == 0 || kinds[len(kinds)-1] != engine.KindContextCompacted {
		t.Fatalf("/compact sent %v", kinds)
	}
	if upto, _ := b.session.Compacted(); upto == 0 {
		t.Fatal("/compact compacted nothing")
	}

	out := filepath.Join(t.TempDir(), "talk.md")
	path, err := b.Export("md", out)
	if err != nil || path != out {
		t.Fatalf("/export md %s: %s, %v", out, path, err)
	}
	md, _ := os.ReadFile(out)
	if !strings.Contains(string(md), "remember that my name is Ada") {
		t.Fatalf("the export lacks the chat:\n%s", md)
	}

	fb, events, err := b.Fork(2)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	if fb.SessionID() == b.SessionID() || len(events) == 0 {
		t.Fatalf("/fork 2: session %s, %d events", fb.SessionID(), len(events))
	}
	if kinds := drain(fb.Start(context.Background(), "what is 6*7?")); kinds[len(kinds)-1] != engine.KindRunFinished {
		t.Fatalf("a run on the fork: %v", kinds)
	}

	cb, events, err := b.Clear()
	if err != nil || len(events) != 0 || cb.SessionID() == b.SessionID() {
		t.Fatalf("/clear: %v, %d events", err, len(events))
	}
	defer cb.Close()

	said, err := b.Trust()
	if err != nil || !strings.Contains(said, "Trusted") {
		t.Fatalf("/trust: %q, %v", said, err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(env["AGENTTY_CONFIG"]), "trusted.json")); err != nil {
		t.Fatalf("/trust recorded nothing: %v", err)
	}
}
