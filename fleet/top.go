package fleet

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/ui"
)

// TopView lays a snapshot out as the fleet screen and agentty top's text
// show it: the runs and the requests waiting, one row each with its
// session, then the pools and the workers.
func TopView(s Snapshot) ui.TopView {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSTATE\tSTEP\tAGE\tTOKENS\tCOST\tWORKER\tAGENT\tTASK\tLAST ERROR")
	var rows []ui.TopRow
	for _, r := range s.Running {
		state := r.State
		if !r.Paused.IsZero() {
			state += " " + age(s.At, r.Paused) + " unanswered"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Session, state, r.Step, age(s.At, r.Since), r.Usage.PromptTokens+r.Usage.CompletionTokens,
			r.Usage.CostString(), r.Worker, dash(r.Agent), engine.OneLine(r.Task, 40), engine.OneLine(r.LastError, 40))
		rows = append(rows, ui.TopRow{Session: r.Session})
	}
	for _, q := range s.Queued {
		fmt.Fprintf(tw, "%s\tqueued\t-\t%s\t-\t-\t(pool %s)\t%s\t%s\t\n", q.Request.Session, age(s.At, q.Submitted), q.Pool, dash(q.Request.Agent), engine.OneLine(q.Request.Task, 40))
		rows = append(rows, ui.TopRow{Session: q.Request.Session, Queued: true})
	}
	tw.Flush()
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	for i := range rows {
		rows[i].Line = lines[i+1]
	}
	b.Reset()
	tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POOL\tWAITING\tRUNNING\tWORKERS\tOLDEST")
	for _, p := range s.Pools {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", p.Pool, p.Waiting, p.Running, p.Workers, age(s.At, p.Oldest))
	}
	fmt.Fprintln(tw, "\nWORKER\tPOOL\tLOAD\tDONE\tHEARTBEAT\tMODEL")
	for _, wb := range s.Workers {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%s ago\t%s\n", wb.ID, wb.Pool, len(wb.Runs), wb.Concurrency, wb.Done, age(s.At, wb.Beat), dash(wb.Model))
	}
	tw.Flush()
	return ui.TopView{
		Title: fmt.Sprintf("agentty top · %s · %d running · %d queued · %d %s", s.At.Local().Format(time.TimeOnly), len(s.Running), len(s.Queued), len(s.Workers), engine.Plural(len(s.Workers), "worker")),
		Head:  lines[0], Rows: rows, Foot: strings.Split(strings.TrimRight(b.String(), "\n"), "\n"),
	}
}

func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return now.Sub(t).Round(time.Second).String()
}

func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// topSource is the fleet screen's source: snapshots from NATS, cancels
// through it.
type topSource struct {
	ctx   context.Context
	nc    *nats.Conn
	store *sessions.Store
	pool  string
}

func (s topSource) Snapshot() ui.TopView {
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	snap, err := TakeSnapshot(ctx, s.nc, s.pool)
	v := TopView(snap)
	if err != nil {
		v.Err = err.Error()
	}
	return v
}

func (s topSource) Cancel(session string) (string, error) {
	ctx, cancel := context.WithTimeout(s.ctx, 15*time.Second)
	defer cancel()
	return Cancel(ctx, s.nc, s.store, session)
}

// RunTop runs the fleet screen until the person quits, and returns the
// session they chose to watch ("" for none).
func RunTop(ctx context.Context, nc *nats.Conn, store *sessions.Store, pool string, every time.Duration) (string, error) {
	t := ui.NewTop(topSource{ctx, nc, store, pool}, every)
	err := ui.RunTop(t)
	return t.Watch, err
}
