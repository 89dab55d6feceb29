package engine_test

import (
	"context"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// A session's settings ride on the run_started of the first run after they
// changed, and a replay of the journal knows them; unchanged, the next
// run_started carries none.
func TestSettingsRideOnRunStarted(t *testing.T) {
	m := enginetest.ModelFunc(func(context.Context, *engine.Request) (engine.Decision, error) {
		return engine.Decision{Text: "ok"}, nil
	})
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t)})
	s := engine.NewSession("s")
	rec := &enginetest.Recorder{}
	set := engine.Settings{Workspace: "/w", Model: "m", AllowShell: true, Step: true, Breaks: []string{"tool=x"}, Origin: "console"}
	s.UseSettings(set)
	e.Run(context.Background(), s, "one", rec)
	s.UseSettings(set)
	e.Run(context.Background(), s, "two", rec)
	starts := rec.Of(engine.KindRunStarted)
	if got := starts[0].Data.(*engine.RunStarted).Settings; got == nil || !got.Equal(&set) {
		t.Errorf("the first run_started carries %+v", got)
	}
	if got := starts[1].Data.(*engine.RunStarted).Settings; got != nil {
		t.Errorf("unchanged settings ride again: %+v", got)
	}
	replayed := replayJSON(t, rec.Events())
	if got := replayed.Settings(); !got.Equal(&set) {
		t.Errorf("replayed settings %+v", got)
	}
}

// TestSaveSettingsBetweenRuns: settings changed after a run's start are
// journaled between runs (settings_changed) and a replay knows them; the
// same settings again write nothing, and a run going refuses (ErrBusy).
func TestSaveSettingsBetweenRuns(t *testing.T) {
	release := make(chan struct{})
	m := enginetest.ModelFunc(func(context.Context, *engine.Request) (engine.Decision, error) {
		<-release
		return engine.Decision{Text: "ok"}, nil
	})
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t)})
	s := engine.NewSession("s")
	rec := &enginetest.Recorder{}
	s.UseSettings(engine.Settings{Workspace: "/w", Origin: "console"})
	events := e.Start(context.Background(), s, "one", rec)
	<-events // run_started: the run is going
	if _, err := s.SaveSettings(engine.Settings{Workspace: "/w"}, rec); err != engine.ErrBusy {
		t.Errorf("saved while a run is going: %v", err)
	}
	close(release)
	for range events {
	}
	set := engine.Settings{Workspace: "/w", Origin: "console", Allowed: []string{"write_file", "run_shell: ls"}, Breaks: []string{"tool=x"}}
	if wrote, err := s.SaveSettings(set, rec); !wrote || err != nil {
		t.Fatalf("changed settings not saved: %v %v", wrote, err)
	}
	if wrote, _ := s.SaveSettings(set, rec); wrote {
		t.Error("the same settings were journaled again")
	}
	saved := rec.Of(engine.KindSettingsChanged)
	if len(saved) != 1 {
		t.Fatalf("%d settings_changed events", len(saved))
	}
	replayed := replayJSON(t, rec.Events())
	if got := replayed.Settings(); !got.Equal(&set) {
		t.Errorf("replayed settings %+v", got)
	}
}

// replayJSON is a session made of events written as JSON and read back.
func replayJSON(t *testing.T, events []engine.Event) *engine.Session {
	t.Helper()
	s := engine.NewSession("s")
	for _, ev := range events {
		line, _ := ev.MarshalJSON()
		var back engine.Event
		if err := back.UnmarshalJSON(line); err != nil {
			t.Fatal(err)
		}
		s.Apply(back)
	}
	return s
}
