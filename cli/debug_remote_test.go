package cli

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
)

// answerBreaks is a watching console's gate that is not stepping: it sees
// only what must stop (breakpoints, approvals) and answers for the tool.
type answerBreaks struct {
	mu   sync.Mutex
	seen []engine.Pending
}

func (g *answerBreaks) Stop(engine.Pending) bool { return false }

func (g *answerBreaks) Wait(_ context.Context, p engine.Pending) (engine.Verdict, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seen = append(g.seen, p)
	return engine.Verdict{Action: engine.Respond, Result: "17*23 = 400"}, nil
}

// submit --break stops a worker's run where the breakpoint holds and asks
// the console watching the session, which answers for the tool; nothing
// else pauses, and the run goes on to the person's answer.
func TestRemoteBreakpoint(t *testing.T) {
	srv := natsServer(t)
	url := srv.URL()
	startWorker(t, url, "")
	env := map[string]string{"AGENTTY_HOME": t.TempDir()}
	code, out, errs := runCLI(t, context.Background(), env, "submit", "--nats", url, "--break", "tool=calc*", "what is 17*23?")
	if code != 0 {
		t.Fatalf("submit: %d %s", code, errs)
	}
	id := strings.TrimSpace(out)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	g := &answerBreaks{}
	signer, err := bus.LoadSigner(env["AGENTTY_HOME"]) // the submitter's: its answers are the run's
	if err != nil {
		t.Fatal(err)
	}
	stop, err := bus.AnswerGate(nc, id, g, signer)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	l := waitAnswered(t, natsStoreAt(t, url), []string{id})[id]
	if a := l.Session.LastRun(); a.Answer != "17*23 = 400" {
		t.Errorf("the run's answer: %+v", a)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.seen) != 1 || g.seen[0].Break != "tool=calc*" || g.seen[0].ToolCall == nil || g.seen[0].ToolCall.Name != "calculator" {
		t.Errorf("the console was asked %+v", g.seen)
	}
	code, _, errs = runCLI(t, context.Background(), env, "submit", "--nats", url, "--break", "colour=red", "hi")
	if code != 2 || !strings.Contains(errs, "the conditions are") {
		t.Errorf("a bad --break was queued: %d %s", code, errs)
	}
}
