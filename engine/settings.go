package engine

import (
	"slices"
	"time"
)

// Settings are what a session is worked on with: its folder, model,
// whether the shell is allowed, step mode and breakpoints, agent, and what
// made it. A run's run_started carries them when they changed since the
// session's last (UseSettings), so that the journal keeps them (one
// stream: journaled, printed and published as any event), a resume
// restores them and lists know the session's folder.
type Settings struct {
	Workspace  string   `json:"workspace,omitempty"`
	Model      string   `json:"model,omitempty"`
	AllowShell bool     `json:"allow_shell,omitempty"`
	Step       bool     `json:"step,omitempty"`
	Breaks     []string `json:"breaks,omitempty"`
	Agent      string   `json:"agent,omitempty"`
	// Origin says what made the session: console, run, eval, workflow
	// or worker (lists mark, and can hide, the sessions of evals).
	Origin string `json:"origin,omitempty"`
	// Allowed is what the person allowed for the session at an approval
	// (a tool's name, or "run_shell: COMMAND"); a resume restores it only
	// from this machine's own journal.
	Allowed []string `json:"allowed,omitempty"`
	// Steer is the public steering key of whoever submitted the session's
	// runs to a worker: a run continued by another worker takes answers
	// signed with this key (and the operator's), whatever a later request
	// says.
	Steer string `json:"steer,omitempty"`
}

// Equal reports whether s and o say the same.
func (s *Settings) Equal(o *Settings) bool {
	return s.Workspace == o.Workspace && s.Model == o.Model && s.AllowShell == o.AllowShell && s.Step == o.Step &&
		slices.Equal(s.Breaks, o.Breaks) && s.Agent == o.Agent && s.Origin == o.Origin && slices.Equal(s.Allowed, o.Allowed) && s.Steer == o.Steer
}

// Settings returns what the session was last worked on with (the zero
// value when its journal says nothing of it).
func (s *Session) Settings() Settings { return s.settings }

// UseSettings makes st the settings the session's next run_started
// carries, when they differ from those it has. Call it before the run
// starts, on the goroutine that starts it.
func (s *Session) UseSettings(st Settings) {
	if st.Equal(&s.settings) {
		s.nextSettings = nil
		return
	}
	s.nextSettings = &st
}

// SaveSettings journals st as the session's settings (settings_changed)
// when they differ from those it has, between runs: what changed after a
// run's run_started (an approval for the session given during the run, a
// breakpoint set after it) is kept for a resume. It reports whether it
// wrote; ErrBusy while a run is going.
func (s *Session) SaveSettings(st Settings, sink Sink) (bool, error) {
	if !s.busy.CompareAndSwap(false, true) {
		return false, ErrBusy
	}
	defer s.busy.Store(false)
	if st.Equal(&s.settings) {
		return false, nil
	}
	ev := Event{V: SchemaVersion, Session: s.ID, Run: s.run.ID, Agent: s.Agent, Step: s.Steps, Kind: KindSettingsChanged, Time: time.Now(), Data: &st}
	if err := emitOutside(ev, sink); err != nil {
		return false, err
	}
	return true, s.Apply(ev)
}
