package console

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// What agentty watch and submit print of a session's events when they do
// not draw the console: the journal read at start, then the live events
// on the bus, each once (Merge), as JSON lines or one readable line each
// (Printer).

// Key is what tells one event from another across the journal and
// the bus: its run, step, kind and time (and session, for watch of all).
type Key struct {
	session, run string
	step         int
	kind         engine.Kind
	time         int64
}

func KeyOf(ev engine.Event) Key {
	return Key{ev.Session, ev.Run, ev.Step, ev.Kind, ev.Time.UnixNano()}
}

// Item is an event to print; raw is its JSON as it came, nil when it
// came from the journal.
type Item struct {
	Ev  engine.Event
	Raw []byte
}

// Merge drops the live events that the journal read at start already
// held. Events are published in the journal's order, after they are
// written, so the live stream's journaled events (all but text deltas) are
// the journal from some point on, then what is newer: a live event is old
// while it is one of the journal's, and from the first that is not, or
// once the journal's last has come by, everything is new. Text deltas are
// never journaled: those that come before a journaled event belong to a
// decision the journal has, and are dropped with it; while that is not yet
// known they are held.
type Merge struct {
	left    map[Key]int // the journal's events not yet seen live
	last    Key         // the journal's last event
	overlap bool        // live events may still be the journal's
	held    []Item      // text deltas waiting to learn which they are
}

func NewMerge(past []engine.Event) *Merge {
	m := &Merge{left: map[Key]int{}}
	for _, ev := range past {
		if ev.Kind == engine.KindTextDelta {
			continue
		}
		k := KeyOf(ev)
		m.left[k]++
		m.last, m.overlap = k, true
	}
	return m
}

// Add takes the next live event and returns what to print now.
func (m *Merge) Add(ev engine.Event, raw []byte) []Item {
	it := Item{Ev: ev, Raw: raw}
	if !m.overlap {
		return []Item{it}
	}
	if ev.Kind == engine.KindTextDelta {
		m.held = append(m.held, it)
		return nil
	}
	k := KeyOf(ev)
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

// Printer writes events as JSON lines, or one readable line each.
type Printer struct {
	W    io.Writer
	JSON bool
	All  bool // every session: each line names its session
	buf  []byte
}

func (p *Printer) Print(ev engine.Event, raw []byte) {
	if p.JSON {
		// Written again from the decoded event, never as received: anyone
		// on the bus can publish, and a payload with a raw newline would
		// break one event per line.
		out, err := ev.AppendJSON(p.buf[:0])
		if err != nil {
			return
		}
		p.buf = out
		p.W.Write(append(out, '\n'))
		return
	}
	if ev.Kind == engine.KindTextDelta {
		return // its decision says it all, on one line
	}
	var b strings.Builder
	b.WriteString(ev.Time.Local().Format("15:04:05.000"))
	if p.All {
		b.WriteString(" " + ev.Session)
	}
	fmt.Fprintf(&b, " %s #%d %s", ev.Run, ev.Step, ev.Kind)
	if s := Summary(ev); s != "" {
		b.WriteString(" " + s)
	}
	b.WriteByte('\n')
	io.WriteString(p.W, b.String())
}

// summary is a short account of an event's payload, on one line.
func Summary(ev engine.Event) string {
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
