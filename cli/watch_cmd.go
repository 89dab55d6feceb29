package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/console"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
	"github.com/nats-io/nats.go"
)

// watchOptions are the flags and arguments of agentty watch.
type watchOptions struct {
	*factory

	Args []string
}

// newWatchCmd binds the flags of its command into its options.
func newWatchCmd(f *factory) *cobra.Command {
	opts := &watchOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "watch [SESSION] [--json]",
		Short: "Follow a session (or all) live over NATS",
		Example: `  agentty watch --nats nats://127.0.0.1:4222           every session, as lines
  agentty watch 0abc12                                  one session, in the console`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			return exit(watchRun(cmd.Context(), opts))
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.App.JSON, "json", false, "print every event as one JSON line")
	cmd.ValidArgsFunction = firstArg(completeSessions(f))
	return cmd
}

// watchRun is `agentty watch [SESSION] [--json]`: one session's events (or
// every session's) as they happen, from NATS. For a session whose journal
// the store holds it first shows what the journal holds, then the live
// events after it, with no gap and none twice: it subscribes first, reads
// the journal, and drops the live events the journal already had
// (watchMerge). One session on a terminal, without --json, opens the
// console on it read-only (watchConsole); otherwise each event is printed
// as a line. Ctrl+C ends it.
func watchRun(ctx context.Context, opts *watchOptions) int {
	o := *opts.App
	stdout, stderr, getenv := opts.Out, opts.Err, opts.Getenv
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty watch: "+format+"\n", a...)
		return code
	}
	if len(opts.Args) > 1 {
		return fail(app.ExitUsage, "one session at most (usage: agentty watch [SESSION] [--json])")
	}
	id := arg(opts.Args, 0)
	if id != "" {
		if err := sessions.CheckID(id); err != nil {
			return fail(app.ExitUsage, "%v", err)
		}
	}
	url := o.NATSURL(getenv)
	if url == "" {
		return fail(app.ExitUsage, "no NATS server: pass --nats URL or set AGENTTY_NATS_URL (agentty serve runs one)")
	}
	errw := &holdWriter{w: stderr} // held while the console has the screen
	stderr = errw
	warn := func(format string, a ...any) { fmt.Fprintf(errw, "agentty watch: warning: "+format+"\n", a...) }
	nc, err := watchConnect(o.NATSConfig("agentty watch", getenv), warn)
	if errors.As(err, new(bus.UsageError)) {
		return fail(app.ExitUsage, "%v", err)
	}
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	defer nc.Close()
	// Subscribed before the journal is read: nothing is missed between.
	sub, err := watchSubscribe(ctx, nc, id)
	if err != nil {
		if ctx.Err() != nil {
			return 0
		}
		return fail(app.ExitError, "subscribe: %v", err)
	}
	if id != "" && !o.JSON && app.OnTerminal(stdout) {
		return watchConsole(ctx, nc, sub, id, url, o, getenv, errw, warn)
	}
	p := &console.Printer{W: stdout, JSON: o.JSON, All: id == ""}
	var past []engine.Event
	if id == "" {
		fmt.Fprintf(stderr, "agentty watch: following every session live on %s; Ctrl+C ends it\n", bus.Redact(url))
	} else {
		past = watchJournal(id, o, getenv, warn)
		fmt.Fprintf(stderr, "agentty watch: session %s: %d events from its journal, then live on %s; Ctrl+C ends it\n", id, len(past), bus.Redact(url))
	}
	for _, ev := range past {
		p.Print(ev, nil)
	}
	merge := console.NewMerge(past)
	for {
		msg, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return 0
			}
			return fail(app.ExitError, "%v", err)
		}
		ev, err := engine.DecodeEvent(msg.Data)
		if err != nil {
			warn("%s: not an event (%v)", msg.Subject, err)
			continue
		}
		for _, it := range merge.Add(ev, msg.Data) {
			p.Print(it.Ev, it.Raw)
		}
	}
}

// watchConnect connects to the server at url, warning of what is missed
// while the connection is down.
func watchConnect(cfg bus.Config, warn func(string, ...any)) (*nats.Conn, error) {
	url := cfg.URL
	return bus.Connect(cfg,
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			warn("%v (some events were missed; the journal has them)", err)
		}),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				warn("disconnected from %s (%v); reconnecting — events published meanwhile are missed", bus.Redact(url), err)
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) { warn("reconnected to %s", bus.Redact(url)) }),
	)
}

// watchSubscribe subscribes to session id's events (every session's when
// id is ""), and makes sure the server has the subscription: every event
// published from now on reaches it.
func watchSubscribe(ctx context.Context, nc *nats.Conn, id string) (*nats.Subscription, error) {
	sub, err := nc.SubscribeSync(bus.Filter(id))
	if err == nil {
		err = sub.SetPendingLimits(-1, 256<<20) // held while the journal is read
	}
	if err == nil {
		fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = nc.FlushWithContext(fctx)
		cancel()
	}
	return sub, err
}

// watchConsole follows session id in the console, read-only: the journal,
// then the live events of sub (merged as watchMerge does), drawn as the
// console draws its own runs. Its gate, in step mode, answers the pauses
// that the session's runs ask for on NATS (bus.AnswerGate): a run submitted
// with --step, and approvals. What is said on stderr meanwhile is held
// until the console ends.
func watchConsole(ctx context.Context, nc *nats.Conn, sub *nats.Subscription, id, url string, o app.Options, getenv func(string) string, errw *holdWriter, warn func(string, ...any)) int {
	var notes []string
	past := watchJournal(id, o, getenv, func(format string, a ...any) {
		notes = append(notes, "Warning: "+fmt.Sprintf(format, a...)+".")
	})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	signer, err := o.Signer(getenv, false)
	if err != nil {
		notes = append(notes, "Warning: "+err.Error()+"; the pauses of this session's runs are left to their submitter.")
	}
	notes = append([]string{fmt.Sprintf("Watching session %s live on %s: %d events from its journal, then its runs as they go. "+
		"Nothing can be started here; the pauses of its runs that were submitted from this data folder (agentty submit --step, tools that ask) are answered here "+
		"with the usual keys (enter, c, e, m, s, n, i to inspect a request, esc); another's runs are only watched. ctrl+t turns step mode off: its runs then go on without pausing.",
		id, bus.Redact(url), len(past))}, notes...)
	err = console.Follow(ctx, console.Followed{
		ID: id, Past: past, Live: watchLive(ctx, sub, id, past, warn), Notice: strings.Join(notes, "\n\n"),
		Answer: func(g engine.Gate) (func(), error) { return bus.AnswerGate(nc, id, g, signer) },
		Hold:   errw.hold, Release: errw.release,
		SendAnswer: func(a string, refused bool) error {
			if refused {
				return bus.SendRefusal(ctx, nc, id, "a watching console", signer)
			}
			_, err := bus.SendAnswer(ctx, nc, id, a, "a watching console", signer)
			return err
		},
	}, getenv)
	if err != nil {
		fmt.Fprintf(errw, "agentty watch: %v\n", err)
		return app.ExitError
	}
	return 0
}

// watchLive sends the live events of session id on sub that are not among
// past (the journal read after subscribing), in order; the channel is
// closed when ctx is done or the subscription fails. Events of another
// session (whose subject token is the same) are dropped.
func watchLive(ctx context.Context, sub *nats.Subscription, id string, past []engine.Event, warn func(string, ...any)) <-chan engine.Event {
	ch := make(chan engine.Event, 64)
	merge := console.NewMerge(past)
	go func() {
		defer close(ch)
		for {
			msg, err := sub.NextMsgWithContext(ctx)
			if err != nil {
				if ctx.Err() == nil {
					warn("%v", err)
				}
				return
			}
			ev, err := engine.DecodeEvent(msg.Data)
			if err != nil {
				warn("%s: not an event (%v)", msg.Subject, err)
				continue
			}
			if ev.Session != id {
				continue
			}
			for _, it := range merge.Add(ev, msg.Data) {
				select {
				case ch <- it.Ev:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return ch
}

// holdWriter writes to w, or while held keeps what is written (the console
// has the screen) and writes it when released.
type holdWriter struct {
	mu   sync.Mutex
	w    io.Writer
	held *bytes.Buffer
}

func (h *holdWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held != nil {
		return h.held.Write(p)
	}
	return h.w.Write(p)
}

func (h *holdWriter) hold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held = new(bytes.Buffer)
}

func (h *holdWriter) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held != nil {
		h.w.Write(h.held.Bytes())
		h.held = nil
	}
}

// watchJournal reads what the journal holds of session id, from the store
// the options name (JetStream with --nats, else the data folder): nothing
// when the store does not have the session (it is followed live only).
// The store, and the connection it may hold, is closed before it returns.
func watchJournal(id string, o app.Options, getenv func(string) string, warn func(string, ...any)) []engine.Event {
	store, err := o.Store(getenv)
	if err != nil {
		warn("%v; following live events only", err)
		return nil
	}
	defer store.Close()
	l, err := store.Load(id)
	switch {
	case errors.Is(err, sessions.ErrNotFound):
		warn("session %s is not in %s; following its live events only", id, store.Where())
		return nil
	case l == nil:
		warn("%v; following live events only", err)
		return nil
	case err != nil: // corrupt: what came before the damage, then live
		warn("%v", err)
	}
	for _, w := range l.Warnings {
		warn("%s", w)
	}
	return l.Events
}
