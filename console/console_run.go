package console

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/gates"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/ui"
)

// Start is how the console starts: a new session, the picker
// (resume with no id) or the session id; in step mode or not.
type Start struct {
	Resume bool
	ID     string
	Step   bool
	Notice string // said in the chat first (--continue found no session)
}

// Run runs the console until the person quits and returns the exit
// code. The console draws on the terminal; on quit, its last answer is
// left on stdout when that is the terminal.
func Run(ctx context.Context, o app.Options, start Start, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fail := func(code int, err error) int {
		fmt.Fprintln(stderr, "agentty:", err)
		return code
	}
	store, err := o.Store(getenv)
	if err != nil {
		return fail(app.ExitError, err)
	}
	bs, err := gates.ParseBreaks(o.Breaks)
	if err != nil {
		return fail(app.ExitUsage, fmt.Errorf("--break: %v", err))
	}
	cfg := ui.Config{Gate: ui.NewGate(start.Step), Style: "dark", Grace: ui.PauseGrace}
	cfg.Gate.SetBreaks(bs.List)
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		cfg.Style = "notty"
	}
	flags := restoreFlags{step: start.Step, breaks: len(o.Breaks) > 0, model: o.Model}
	opened, err := openSession(store, start, &o, getenv)
	if err != nil {
		return fail(app.ExitError, err)
	}
	journal := opened.journal
	if app.IsTerminal(stdin) {
		o.AskTrust = app.PromptTrust(stdin, stderr)
	}
	st, err := app.Build(ctx, o, cfg.Gate, getenv)
	if err != nil {
		if journal != nil {
			journal.Close()
		}
		if errors.Is(err, app.ErrQuit) {
			return fail(app.ExitError, err) // nothing was done: a script sees it
		}
		if errors.As(err, new(app.UsageError)) {
			return fail(app.ExitUsage, err)
		}
		return fail(app.ExitError, err)
	}
	defer st.Close()
	if st.Workspace() != nil {
		cfg.Gate.SetPreview(st.Workspace().Preview)
	}
	con := &Console{Store: store, Setup: st, Opts: o, Getenv: getenv, gate: cfg.Gate}
	home := o.DataHome(getenv)
	if opened.session != nil {
		opened.notes = append(opened.notes, con.restore(opened.session, flags)...)
	}
	if start.Notice != "" {
		opened.notes = append(opened.notes, start.Notice)
	}
	con.configure(&cfg, opened, home)
	m := ui.New(cfg)
	err = ui.Run(m)
	if b := m.Backend(); b != nil && home != "" {
		saveDraft(home, b.SessionID(), m.Draft(), st.Redact) // back when the session is opened again
	}
	for _, b := range []ui.Backend{cfg.Backend, m.Backend()} {
		if b != nil {
			b.Close() // a session never written leaves nothing (sessions.Store.Create)
		}
	}
	st.Flush(stderr, "agentty")
	if err == nil {
		leaveLastAnswer(stdout, m)
	}
	return consoleEnded(err, store, stderr, cfg.Backend, m.Backend())
}

// leaveLastAnswer prints the console's last answer on stdout, after the
// console has left the alternate screen, so that it stays in the
// terminal's scrollback: only on a terminal (a script's stdout stays
// empty), as plain text wrapped to it.
func leaveLastAnswer(stdout io.Writer, m *ui.Model) {
	if !app.OnTerminal(stdout) {
		return
	}
	if answer := m.LastAnswer(app.TermWidth(app.RawOf(stdout))); answer != "" {
		fmt.Fprintf(stdout, "agentty's last answer:\n\n%s\n\n", answer)
	}
}

// configure sets up cfg for the session c of con's setup: its backend
// (read-only when another process writes it), the notices, the
// workspace's input history and the session's draft, kept in home.
func (con *Console) configure(cfg *ui.Config, c opened, home string) {
	st, o := con.Setup, con.Opts
	cfg.Model = st.ModelName
	notices := st.Notices
	cfg.Status = mcpDown(st)
	cfg.Sessions = picker{store: con.Store, setup: st, con: con}
	cfg.Events = c.events
	if c.journal != nil {
		cfg.Backend = con.openWith(c.journal, c.session, c.events)
		if o.Agent != "" && c.session.Agent != "" && c.session.Agent != o.Agent {
			// The session ran as another agent: --agent picks this one, journaled.
			if ev, err := c.session.SwitchAgent(o.Agent, c.journal); err != nil {
				notices = append(notices, "--agent "+o.Agent+": "+err.Error())
			} else {
				cfg.Events = append(cfg.Events, ev)
			}
		}
		if home != "" {
			cfg.Draft = readDraft(home, c.journal.ID)
		}
	}
	if c.readOnly != nil {
		cfg.Backend = c.readOnly
		notices = append(notices, "Read-only: "+c.readOnly.why+". Nothing can be added to this session here; ctrl+o opens another.")
	}
	if st.ModelName == offline.Name {
		notices = append(notices, offlineNotice)
	}
	cfg.Notice = strings.Join(append(notices, c.notes...), "\n\n")
	if home != "" {
		hist, lines := openHistory(home, cmp.Or(o.Workspace, "."), st.Redact)
		cfg.History, cfg.Remember = lines, hist.Add
	}
}

// opened is the session the console opens: journal and session to go on
// with, or, when another process writes it, readOnly; events are its
// journal so far.
type opened struct {
	journal  *sessions.Journal
	session  *engine.Session
	events   []engine.Event
	readOnly *readOnlyBackend
	notes    []string // what was restored of the session's settings
}

// openSession opens the session start names, or a new one; none when start
// asks for the picker. A resumed session keeps its model unless o names
// one.
func openSession(store *sessions.Store, start Start, o *app.Options, getenv func(string) string) (opened, error) {
	var c opened
	var err error
	switch {
	case start.Resume && start.ID != "":
		var l *sessions.Loaded
		var why string
		if c.journal, l, why, err = store.Resume(start.ID); err != nil {
			return c, err
		}
		if c.journal == nil {
			c.readOnly = &readOnlyBackend{id: start.ID, why: why}
			c.events = l.Events
		} else {
			c.session, c.events = l.Session, l.Events
		}
		if o.Model == "" {
			// The model the person picked for it (/model), else the one it
			// was last worked on with, else its last run's; one that cannot
			// be used here (a script in another folder, no key) leaves the
			// session open to read, on the default model.
			o.Model = cmp.Or(l.Session.Model, l.Session.Settings().Model, l.Meta.Model)
			user, _ := config.LoadUser(getenv) // the workspace's base_url takes trust, asked later
			if user == nil {
				user = &config.Settings{}
			}
			if _, _, err := app.PickModel(*o, user, getenv); err != nil {
				c.notes = append(c.notes, fmt.Sprintf("This session's model %s cannot be used here (%v): it is open on the default model; /model or --model picks another.", o.Model, err))
				o.Model = ""
			}
		}
		if set := l.Session.Settings(); set.AllowShell && !o.AllowShell && c.journal != nil && store.Local() {
			// The person's own journal: the shell comes back with the session.
			o.AllowShell = true
			c.notes = append(c.notes, "run_shell is offered, as when this session was last worked on (--allow-shell).")
		}
	case !start.Resume:
		if c.journal, err = store.Create(); err != nil {
			return c, err
		}
		c.session = engine.NewSession(c.journal.ID)
	}
	return c, nil
}

// mcpDown is the status line's word on the MCP servers that did not start
// ("" when all did).
func mcpDown(st *app.Setup) string {
	if st.MCP() != nil {
		var down []string
		for _, s := range st.MCP().Status() {
			if !s.OK {
				down = append(down, s.Server)
			}
		}
		if len(down) > 0 {
			return "MCP down: " + strings.Join(down, ", ")
		}
	}
	return ""
}

// offlineNotice is said when the console runs on the offline model.
const offlineNotice = "Using the built-in offline model: no model key and no model server are configured. It can do arithmetic, " +
	"remember and recall facts, tell the time, read and search files and past sessions, delegate to the agents you " +
	"define and run workflows (/workflow). For a real model set OPENAI_API_KEY, or point --base-url at a local server " +
	"(Ollama: agentty --base-url http://localhost:11434/v1 --model qwen2.5-coder:7b)."

// consoleEnded says how the console ended and returns the exit code: a
// crash is written to a report beside the sessions.
func consoleEnded(err error, store *sessions.Store, stderr io.Writer, backends ...ui.Backend) int {
	if pe, ok := errors.AsType[*ui.PanicError](err); ok {
		// The terminal is restored and the run's end journaled (ui.Run);
		// keep the stack where the person can send it to us.
		path, werr := writeCrash(filepath.Dir(store.Dir()), pe, backends...)
		if werr != nil {
			fmt.Fprintf(stderr, "agentty: the console crashed (%v) and the crash report could not be written (%v); the session is saved.\n", pe.Value, werr)
		} else {
			fmt.Fprintf(stderr, "agentty: the console crashed (%v); the session is saved, and the report is in %s\n", pe.Value, path)
		}
		return app.ExitError
	}
	if err != nil {
		fmt.Fprintln(stderr, "agentty:", err)
		return app.ExitError
	}
	sayWhereToGoOn(store, stderr, backends[len(backends)-1])
	return 0
}

// sayWhereToGoOn tells a person leaving the console how to come back to
// the session it showed last, when that session has a run to come back to.
func sayWhereToGoOn(store *sessions.Store, stderr io.Writer, b ui.Backend) {
	if b == nil {
		return
	}
	id := b.SessionID()
	if m, err := store.Meta(id); err == nil && m.Runs > 0 {
		fmt.Fprintf(stderr, "agentty: session %s is saved; agentty --resume %s goes on with it\n", id, id)
	}
}

// writeCrash writes the stack of a console panic to a new file in
// home/crashes and returns its path.
func writeCrash(home string, pe *ui.PanicError, backends ...ui.Backend) (string, error) {
	dir := filepath.Join(home, "crashes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	now := time.Now()
	f, err := os.CreateTemp(dir, "crash-"+now.Format("20060102-150405")+"-*.txt")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "agentty console crash, %s\n", now.Format(time.RFC3339))
	for _, be := range backends {
		if be != nil {
			fmt.Fprintf(&b, "session: %s\n", be.SessionID())
		}
	}
	stack := string(pe.Stack)
	if stack == "" {
		stack = "(Bubble Tea caught this panic itself and printed its stack on the terminal)\n"
	}
	fmt.Fprintf(&b, "panic: %v\n\n%s", pe.Value, stack)
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return f.Name(), err
}
