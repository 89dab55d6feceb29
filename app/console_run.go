package app

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

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/ui"
)

// ConsoleStart is how the console starts: a new session, the picker
// (resume with no id) or the session id; in step mode or not.
type ConsoleStart struct {
	Resume bool
	ID     string
	Step   bool
}

// RunConsole runs the console until the person quits and returns the exit
// code.
func RunConsole(ctx context.Context, o Options, start ConsoleStart, stdin io.Reader, stderr io.Writer, getenv func(string) string) int {
	fail := func(code int, err error) int {
		fmt.Fprintln(stderr, "agentty:", err)
		return code
	}
	resume, resumeID := start.Resume, start.ID
	store, err := o.Store(getenv)
	if err != nil {
		return fail(ExitError, err)
	}
	cfg := ui.Config{Gate: ui.NewGate(start.Step), Style: "dark"}
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		cfg.Style = "notty"
	}
	var events []engine.Event
	var journal *sessions.Journal
	var session *engine.Session
	var readOnly *readOnlyBackend
	switch {
	case resume && resumeID != "":
		var l *sessions.Loaded
		var why string
		if journal, l, why, err = store.Resume(resumeID); err != nil {
			return fail(ExitError, err)
		}
		if journal == nil {
			readOnly = &readOnlyBackend{id: resumeID, why: why}
			events = l.Events
		} else {
			session, events = l.Session, l.Events
		}
		if o.Model == "" {
			// The model the person picked for it (/model), else its last run's.
			o.Model = cmp.Or(l.Session.Model, l.Meta.Model)
		}
	case !resume:
		if journal, err = store.Create(); err != nil {
			return fail(ExitError, err)
		}
		session = engine.NewSession(journal.ID)
	}
	if IsTerminal(stdin) {
		o.askTrust = PromptTrust(stdin, stderr)
	}
	st, err := Build(ctx, o, cfg.Gate, getenv)
	if err != nil {
		if journal != nil {
			journal.Close()
		}
		if errors.Is(err, errQuit) {
			fmt.Fprintln(stderr, "agentty:", err)
			return 0
		}
		if errors.As(err, new(UsageError)) {
			return fail(ExitUsage, err)
		}
		return fail(ExitError, err)
	}
	defer st.Close()
	cfg.Model = st.ModelName
	notices := st.Notices
	if st.mcp != nil {
		var down []string
		for _, s := range st.mcp.Status() {
			if !s.OK {
				down = append(down, s.Server)
			}
		}
		if len(down) > 0 {
			cfg.Status = "MCP down: " + strings.Join(down, ", ")
		}
	}
	con := &Console{Store: store, Setup: st, Opts: o, Getenv: getenv}
	cfg.Sessions = picker{store: store, setup: st, con: con}
	cfg.Events = events
	if journal != nil {
		cfg.Backend = con.openWith(journal, session, events)
		if o.Agent != "" && session.Agent != "" && session.Agent != o.Agent {
			// The session ran as another agent: --agent picks this one, journaled.
			if ev, err := session.SwitchAgent(o.Agent, journal); err != nil {
				notices = append(notices, "--agent "+o.Agent+": "+err.Error())
			} else {
				cfg.Events = append(cfg.Events, ev)
			}
		}
	}
	if readOnly != nil {
		cfg.Backend = readOnly
		notices = append(notices, "Read-only: "+readOnly.why+". Nothing can be added to this session here; ctrl+o opens another.")
	}
	if st.ModelName == offline.Name {
		notices = append(notices, "Using the built-in offline model: no model key and no model server are configured. It can do arithmetic, "+
			"remember and recall facts, tell the time, read and search files and past sessions, delegate to the agents you "+
			"define and run workflows (/workflow). For a real model set OPENAI_API_KEY, or point --base-url at a local server "+
			"(Ollama: agentty --base-url http://localhost:11434/v1 --model qwen2.5-coder:7b).")
	}
	cfg.Notice = strings.Join(notices, "\n\n")
	m := ui.New(cfg)
	err = ui.Run(m)
	for _, b := range []ui.Backend{cfg.Backend, m.Backend()} {
		if b != nil {
			b.Close() // a session never written leaves nothing (sessions.Store.Create)
		}
	}
	if why := st.CloseTraces(); why != "" {
		fmt.Fprintln(stderr, "agentty: warning:", why)
	}
	if why := st.CloseBus(); why != "" {
		fmt.Fprintln(stderr, "agentty: warning:", why)
	}
	if pe, ok := errors.AsType[*ui.PanicError](err); ok {
		// The terminal is restored and the run's end journaled (ui.Run);
		// keep the stack where the person can send it to us.
		path, werr := writeCrash(filepath.Dir(store.Dir()), pe, cfg.Backend, m.Backend())
		if werr != nil {
			fmt.Fprintf(stderr, "agentty: the console crashed (%v) and the crash report could not be written (%v); the session is saved.\n", pe.Value, werr)
		} else {
			fmt.Fprintf(stderr, "agentty: the console crashed (%v); the session is saved, and the report is in %s\n", pe.Value, path)
		}
		return ExitError
	}
	if err != nil {
		return fail(ExitError, err)
	}
	return 0
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
