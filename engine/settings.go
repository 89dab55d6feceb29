package engine

import "slices"

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
}

// Equal reports whether s and o say the same.
func (s *Settings) Equal(o *Settings) bool {
	return s.Workspace == o.Workspace && s.Model == o.Model && s.AllowShell == o.AllowShell && s.Step == o.Step &&
		slices.Equal(s.Breaks, o.Breaks) && s.Agent == o.Agent && s.Origin == o.Origin
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
