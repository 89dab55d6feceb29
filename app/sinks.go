package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/traces"
)

// The sinks a setup gives every run besides its journal: events published
// on NATS (startBus), spans to an OTLP collector (startTraces).

// startBus connects to the NATS server of --nats or AGENTTY_NATS_URL, once
// for every run of the setup. A server that cannot be reached is a notice,
// not an error: the runs go on, journaled, unpublished.
func (s *Setup) startBus(o Options, getenv func(string) string) error {
	url := o.NATSURL(getenv)
	if url == "" {
		if o.NATSCreds != "" {
			return UsageError{fmt.Errorf("--nats-creds needs --nats URL (or AGENTTY_NATS_URL)")}
		}
		return nil
	}
	nc, err := bus.Connect(o.NATSConfig("agentty "+s.ModelName, getenv))
	if errors.As(err, new(bus.UsageError)) {
		return UsageError{err}
	}
	if err != nil {
		s.Notices = append(s.Notices, err.Error()+"; events are not published (the journal has them)")
		return nil
	}
	s.Bus, s.busConn = bus.NewSink(nc), nc
	return nil
}

// Flush sends the spans and events still queued (CloseTraces, CloseBus),
// writing on w, after prefix, a warning for what could not be sent.
func (s *Setup) Flush(w io.Writer, prefix string) {
	for _, why := range []string{s.CloseTraces(), s.CloseBus()} {
		if why != "" {
			fmt.Fprintln(w, prefix+": warning:", why)
		}
	}
}

// CloseBus sends what is still buffered (waiting a bounded time) and says,
// once, what could not be published; "" when everything was.
func (s *Setup) CloseBus() string {
	if s.Bus == nil {
		return ""
	}
	err := s.Bus.Close(2 * time.Second)
	s.busConn.Close()
	s.Bus, s.busConn = nil, nil
	if err != nil {
		return err.Error()
	}
	return ""
}

// startTraces sets up the OTLP pipeline when it is asked for.
func (s *Setup) startTraces(ctx context.Context, o Options, getenv func(string) string) error {
	tc := traces.Config{Endpoint: o.OTLP, File: o.TraceFile, Content: o.TraceContent || traces.ContentFromEnv(getenv), Getenv: getenv}
	if !tc.Enabled() {
		return nil
	}
	t, err := traces.Start(ctx, tc)
	if err != nil {
		return UsageError{err}
	}
	s.tracing = t
	s.Trace = t.Sink(traces.Options{Model: s.ModelName})
	return nil
}

// WithTrace is journal followed by the trace sink, if the setup traces,
// and the NATS sink, if it publishes: the journal sees every event first.
func (s *Setup) WithTrace(journal engine.Sink) engine.Sink {
	sinks := engine.Sinks{journal}
	if s.Trace != nil {
		sinks = append(sinks, s.Trace)
	}
	if s.Bus != nil {
		sinks = append(sinks, s.Bus)
	}
	if len(sinks) == 1 {
		return journal
	}
	return sinks
}

// FlushTraces sends the spans queued now (a worker's run that ended,
// before its request is acknowledged); nil when the setup does not trace.
func (s *Setup) FlushTraces(ctx context.Context) error {
	if s.tracing == nil {
		return nil
	}
	return s.tracing.Flush(ctx)
}

// CloseTraces sends the spans still queued (waiting a bounded time) and
// says why, once, if spans could not be sent; "" otherwise.
func (s *Setup) CloseTraces() string {
	if s.tracing == nil {
		return ""
	}
	err := s.tracing.Close()
	s.tracing = nil
	if err != nil {
		return err.Error()
	}
	return ""
}

const systemPrompt = "You are agentty, a careful agent working in a terminal. Use the tools when they help; " +
	"the memory facts given to you are things the user asked you to remember. Answer concisely in Markdown."
