package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/traces"
)

// TraceSession sends a stored session's runs (or one) to the OTLP collector
// as spans with their recorded times and ids.
func TraceSession(store *sessions.Store, id, run string, o Options, getenv func(string) string, stdout io.Writer) error {
	tc := traces.Config{Endpoint: o.OTLP, File: o.TraceFile, Content: o.TraceContent || traces.ContentFromEnv(getenv), Getenv: getenv}
	if !tc.Enabled() {
		return Usage(errors.New("no collector: give --otlp URL (or set OTEL_EXPORTER_OTLP_ENDPOINT), or --out FILE for OTLP JSON"))
	}
	l, err := store.Load(id)
	if err != nil {
		return err
	}
	t, err := traces.Start(context.Background(), tc)
	if err != nil {
		return Usage(err)
	}
	sink := t.Sink(traces.Options{Model: l.Meta.Model, Replay: true})
	var runs []string
	seen := map[string]bool{}
	for _, ev := range l.Events {
		if ev.Run == "" || (run != "" && ev.Run != run) {
			continue
		}
		if !seen[ev.Run] {
			seen[ev.Run] = true
			runs = append(runs, ev.Run)
		}
		sink.Emit(ev)
	}
	sink.Close()
	if err := t.Close(); err != nil {
		return err
	}
	if len(runs) == 0 {
		if run != "" {
			return fmt.Errorf("session %s has no run %q", id, run)
		}
		return fmt.Errorf("session %s has no runs", id)
	}
	for _, r := range runs {
		fmt.Fprintf(stdout, "%s %s trace %s\n", id, r, traces.TraceID(l.Session.ID, r))
	}
	return nil
}
