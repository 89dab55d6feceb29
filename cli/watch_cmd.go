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
	p := &watchPrinter{w: stdout, json: o.JSON, all: id == ""}
	var past []engine.Event
	if id == "" {
		fmt.Fprintf(stderr, "agentty watch: following every session live on %s; Ctrl+C ends it\n", bus.Redact(url))
	} else {
		past = watchJournal(id, o, getenv, warn)
		fmt.Fprintf(stderr, "agentty watch: session %s: %d events from its journal, then live on %s; Ctrl+C ends it\n", id, len(past), bus.Redact(url))
	}
	for _, ev := range past {
		p.print(ev, nil)
	}
	merge := newWatchMerge(past)
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
		for _, it := range merge.add(ev, msg.Data) {
			p.print(it.ev, it.raw)
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
	merge := newWatchMerge(past)
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
			for _, it := range merge.add(ev, msg.Data) {
				select {
				case ch <- it.ev:
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

// watchKey is what tells one event from another across the journal and
// the bus: its run, step, kind and time (and session, for watch of all).
type watchKey struct {
	session, run string
	step         int
	kind         engine.Kind
	time         int64
}

func keyOf(ev engine.Event) watchKey {
	return watchKey{ev.Session, ev.Run, ev.Step, ev.Kind, ev.Time.UnixNano()}
}

// watchItem is an event to print; raw is its JSON as it came, nil when it
// came from the journal.
type watchItem struct {
	ev  engine.Event
	raw []byte
}

// watchMerge drops the live events that the journal read at start already
// held. Events are published in the journal's order, after they are
// written, so the live stream's journaled events (all but text deltas) are
// the journal from some point on, then what is newer: a live event is old
// while it is one of the journal's, and from the first that is not, or
// once the journal's last has come by, everything is new. Text deltas are
// never journaled: those that come before a journaled event belong to a
// decision the journal has, and are dropped with it; while that is not yet
// known they are held.
type watchMerge struct {
	left    map[watchKey]int // the journal's events not yet seen live
	last    watchKey         // the journal's last event
	overlap bool             // live events may still be the journal's
	held    []watchItem      // text deltas waiting to learn which they are
}

func newWatchMerge(past []engine.Event) *watchMerge {
	m := &watchMerge{left: map[watchKey]int{}}
	for _, ev := range past {
		if ev.Kind == engine.KindTextDelta {
			continue
		}
		k := keyOf(ev)
		m.left[k]++
		m.last, m.overlap = k, true
	}
	return m
}

// add takes the next live event and returns what to print now.
func (m *watchMerge) add(ev engine.Event, raw []byte) []watchItem {
	it := watchItem{ev, raw}
	if !m.overlap {
		return []watchItem{it}
	}
	if ev.Kind == engine.KindTextDelta {
		m.held = append(m.held, it)
		return nil
	}
	k := keyOf(ev)
	if m.left[k] > 0 { // the journal had it
		m.left[k]--
		m.held = m.held[:0]
		if k == m.last && m.left[k] == 0 {
			m.overlap, m.left = false, nil
		}
		return nil
	}
	m.overlap, m.left = false, nil
	out := append(m.held, it)
	m.held = nil
	return out
}

// watchPrinter writes events as JSON lines, or one readable line each.
type watchPrinter struct {
	w    io.Writer
	json bool
	all  bool // every session: each line names its session
	buf  []byte
}

func (p *watchPrinter) print(ev engine.Event, raw []byte) {
	if p.json {
		// Written again from the decoded event, never as received: anyone
		// on the bus can publish, and a payload with a raw newline would
		// break one event per line.
		out, err := ev.AppendJSON(p.buf[:0])
		if err != nil {
			return
		}
		p.buf = out
		p.w.Write(append(out, '\n'))
		return
	}
	if ev.Kind == engine.KindTextDelta {
		return // its decision says it all, on one line
	}
	var b strings.Builder
	b.WriteString(ev.Time.Local().Format("15:04:05.000"))
	if p.all {
		b.WriteString(" " + ev.Session)
	}
	fmt.Fprintf(&b, " %s #%d %s", ev.Run, ev.Step, ev.Kind)
	if s := summary(ev); s != "" {
		b.WriteString(" " + s)
	}
	b.WriteByte('\n')
	io.WriteString(p.w, b.String())
}

// summary is a short account of an event's payload, on one line.
func summary(ev engine.Event) string {
	one := func(s string) string { return engine.OneLine(s, 100) }
	switch d := ev.Data.(type) {
	case *engine.RunStarted:
		s := one(d.Task)
		if ev.Agent != "" {
			s = "as " + ev.Agent + ": " + s
		}
		return s
	case *engine.StepStarted:
		return fmt.Sprintf("turn %d", d.Turn)
	case *engine.ModelRequest:
		return fmt.Sprintf("%d %s, %d tokens", d.Messages, engine.Plural(d.Messages, "message"), d.Tokens)
	case *engine.Decided:
		if len(d.ToolCalls) > 0 {
			names := make([]string, len(d.ToolCalls))
			for i, c := range d.ToolCalls {
				names[i] = c.Name
			}
			return "calls " + one(strings.Join(names, ", "))
		}
		return "answer: " + one(d.Text)
	case *engine.ToolStarted:
		return one(d.Name + " " + string(d.Args))
	case *engine.ToolFinished:
		s := d.Name + " " + string(d.Status)
		if d.Error != "" {
			return one(s + ": " + d.Error)
		}
		return one(s + ": " + d.Result)
	case *engine.RetryScheduled:
		return one(fmt.Sprintf("%s attempt %d in %v: %s", d.Op, d.Attempt, time.Duration(d.DelayMS)*time.Millisecond, d.Cause))
	case *engine.MemoryChanged:
		if d.Op == engine.MemoryDelete {
			return one("delete " + d.Key)
		}
		return one("set " + d.Key + " = " + d.Value)
	case *engine.ContextTrimmed:
		return fmt.Sprintf("dropped %d %s (%d tokens)", d.Dropped, engine.Plural(d.Dropped, "message"), d.DroppedTokens)
	case *engine.ContextCompacted:
		return fmt.Sprintf("summarised %d %s (%d → %d tokens)", d.Messages, engine.Plural(d.Messages, "message"), d.TokensBefore, d.TokensAfter)
	case *engine.GatePaused:
		s := "at " + string(d.At)
		if d.ToolCall != nil {
			s += " " + d.ToolCall.Name
		}
		return one(s)
	case *engine.GateResumed:
		return string(d.Action)
	case *engine.UsageRecorded:
		return fmt.Sprintf("%d prompt + %d completion tokens", d.PromptTokens, d.CompletionTokens)
	case *engine.StepFinished:
		return fmt.Sprintf("%d tool %s", d.ToolCalls, engine.Plural(d.ToolCalls, "call"))
	case *engine.RunFinished:
		switch {
		case d.Error != "":
			return one(string(d.StopReason) + ": " + d.Error)
		case d.Answer != "":
			return one(string(d.StopReason) + ": " + d.Answer)
		}
		return string(d.StopReason)
	case *engine.Handoff:
		return one(d.From + " → " + d.To)
	case *engine.ModelChanged:
		return one(d.Model)
	case *engine.WorkflowStarted:
		return one(d.Name)
	case *engine.WorkflowStepFinished:
		return one(d.Step + " " + d.Status + ": " + d.Output)
	case *engine.WorkflowFinished:
		return one(d.Name + " " + d.Status + ": " + d.Output + d.Error)
	case *engine.Notice:
		return one(d.Level + ": " + d.Message)
	}
	return ""
}
