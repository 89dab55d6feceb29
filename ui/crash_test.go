package ui

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// crashBackend runs like the engine does (on cancel: run_finished, with
// stop reason error when the cause is engine.ErrCrashed, then the channel
// closes) and panics where a test asks it to.
type crashBackend struct {
	panicIn string // "view" (SessionID once a run is going) or "update" (ChangeMemory)

	mu      sync.Mutex
	running bool
	cause   error
	sent    *engine.Event // the run_finished the console took
	done    chan struct{}
}

func (b *crashBackend) Start(ctx context.Context, task string) <-chan engine.Event {
	ch := make(chan engine.Event)
	b.mu.Lock()
	b.running, b.done = true, make(chan struct{})
	done := b.done
	b.mu.Unlock()
	go func() {
		defer close(done)
		defer close(ch)
		ch <- engine.Event{Kind: engine.KindRunStarted, Data: &engine.RunStarted{Task: task}}
		<-ctx.Done()
		cause := context.Cause(ctx)
		stop := engine.StopCancelled
		if errors.Is(cause, engine.ErrCrashed) {
			stop = engine.StopError
		}
		ev := engine.Event{Kind: engine.KindRunFinished, Data: &engine.RunFinished{StopReason: stop, Error: cause.Error()}}
		ch <- ev
		b.mu.Lock()
		b.cause, b.sent = cause, &ev
		b.mu.Unlock()
	}()
	return ch
}

func (b *crashBackend) Continue(ctx context.Context) <-chan engine.Event { return b.Start(ctx, "") }

func (b *crashBackend) ChangeMemory(engine.MemoryChanged) (engine.Event, error) {
	if b.panicIn == "update" {
		panic("a bug in a memory edit")
	}
	return engine.Event{}, nil
}

func (b *crashBackend) SessionID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.panicIn == "view" && b.running {
		panic("a bug in drawing a run")
	}
	return "s1"
}

func (b *crashBackend) Close() error { return nil }

// panickySessions fails to list in its own way: its command panics.
type panickySessions struct{}

func (panickySessions) List() ([]SessionInfo, error) { panic("a bug in listing sessions") }
func (panickySessions) Open(string) (Backend, []engine.Event, error) {
	return nil, nil, errors.New("no")
}

// TestRunRecoversPanics: a panic in View, in Update or in a command ends
// the console with a *PanicError holding the panic and its stack; a run
// that was going is cancelled with engine.ErrCrashed, and its last event
// is taken from it before Run returns, so the journal has it.
func TestRunRecoversPanics(t *testing.T) {
	tests := []struct {
		name, panicIn, value, frame string
		keys                        []string // each read on its own, as a person types
		run                         bool
	}{
		{"view", "view", "a bug in drawing a run", "crashBackend).SessionID", []string{"hello", "\r"}, true},
		{"update", "update", "a bug in a memory edit", "crashBackend).ChangeMemory", []string{"\t\t\t", "a", "k = v", "\r"}, false},
		{"command", "", "a bug in listing sessions", "panickySessions.List", []string{"\x0f"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &crashBackend{panicIn: tt.panicIn}
			m := New(Config{Style: "notty", Backend: b, Sessions: panickySessions{}})
			in, keys := io.Pipe()
			go func() {
				for _, k := range tt.keys {
					if _, err := keys.Write([]byte(k)); err != nil {
						return
					}
				}
				// The pipe stays open, as a terminal does, until the end.
			}()
			defer keys.Close()
			ran := make(chan error, 1)
			go func() { ran <- Run(m, tea.WithInput(in), tea.WithOutput(io.Discard), tea.WithoutSignalHandler()) }()
			var err error
			select {
			case err = <-ran:
			case <-time.After(30 * time.Second):
				t.Fatal("the console did not end")
			}
			var p *PanicError
			if !errors.As(err, &p) {
				t.Fatalf("Run returned %v, want a *PanicError", err)
			}
			if p.Value != tt.value || !strings.Contains(string(p.Stack), tt.frame) {
				t.Errorf("panic %v with stack\n%s\nwant %q from %s", p.Value, p.Stack, tt.value, tt.frame)
			}
			if !strings.Contains(err.Error(), tt.value) {
				t.Errorf("error %q does not say what panicked", err)
			}
			if !tt.run {
				return
			}
			b.mu.Lock()
			done := b.done
			b.mu.Unlock()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the run did not end")
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if !errors.Is(b.cause, engine.ErrCrashed) {
				t.Errorf("the run was cancelled with %v, want engine.ErrCrashed", b.cause)
			}
			if b.sent == nil || b.sent.Data.(*engine.RunFinished).StopReason != engine.StopError {
				t.Errorf("the run's last event: %+v", b.sent)
			}
		})
	}
}

// TestGuardCmd: a command's panic comes back to Update as a message, in a
// batch too.
func TestGuardCmd(t *testing.T) {
	g := &guard{m: New(Config{Style: "notty"})}
	boom := func() tea.Msg { panic("boom") }
	msg := guardCmd(tea.Batch(boom, func() tea.Msg { return nil }), g)()
	batch, ok := msg.(tea.BatchMsg)
	if !ok {
		t.Fatalf("a batch came back as %T", msg)
	}
	pm, ok := batch[0]().(panicMsg)
	if !ok || pm.err.Value != "boom" {
		t.Fatalf("a panicking command returned %#v", pm)
	}
	if _, cmd := g.Update(pm); cmd == nil || cmd() != tea.Quit() {
		t.Errorf("Update does not quit after a panic")
	}
	if g.View() != "" {
		t.Errorf("View draws after a panic")
	}
}
