package console

import (
	"cmp"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/ui"
)

// picker opens sessions of a store for the console.
type picker struct {
	store *sessions.Store
	setup *app.Setup
	con   *Console
}

// List adapts the store's listing to the picker's.
func (p picker) List() ([]ui.SessionInfo, error) {
	ls, err := p.store.List()
	if err != nil {
		return nil, err
	}
	ws, _ := filepath.Abs(cmp.Or(p.con.Opts.Workspace, "."))
	sessions.HereFirst(ls, upToRepo(ws)...) // this folder's first, then those above it in its repository
	out := make([]ui.SessionInfo, len(ls))
	now := time.Now()
	for i, l := range ls {
		out[i] = ui.SessionInfo{ID: l.ID, Title: l.Title, Model: l.Model, Updated: l.Updated,
			Steps: l.LastStep, Interrupted: l.Interrupted && !l.Writing, Running: l.Writing, Err: l.Err, Origin: l.Origin, Age: sessions.Age(l.Updated, now)}
		if l.Workspace != ws {
			out[i].Elsewhere = l.Workspace
		}
		out[i].ForkOf, out[i].ForkStep = forkOf(l.Title)
	}
	return out, nil
}

// forkTitle is what sessions.Store.Fork writes at the end of a fork's title.
var forkTitle = regexp.MustCompile(`\(fork of ([0-9a-z]+) at step (\d+)\)`)

// forkOf reads the session a fork was forked from, and the step, from its
// title (the meta has no field for them); "" when the title says none (or
// was cut before it).
func forkOf(title string) (string, int) {
	ms := forkTitle.FindAllStringSubmatch(title, -1)
	if len(ms) == 0 {
		return "", 0
	}
	m := ms[len(ms)-1] // a fork of a fork: the last is its own
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return "", 0
	}
	return m[1], n
}

func (p picker) Open(id string) (ui.Backend, []engine.Event, error) {
	j, l, why, err := p.store.Resume(id)
	switch {
	case err != nil:
		return nil, nil, err
	case j == nil:
		return &readOnlyBackend{id: id, why: why}, l.Events, nil
	}
	b := p.con.openWith(j, l.Session, l.Events)
	events := l.Events
	for _, note := range p.con.restore(l.Session, restoreFlags{model: p.con.Opts.Model}) {
		// Said in the chat, not journaled: it is this console's.
		events = append(events, engine.Event{V: engine.SchemaVersion, Session: id, Kind: engine.KindNotice, Time: time.Now(),
			Data: &engine.Notice{Level: "info", Message: note}})
	}
	return b, events, nil
}
