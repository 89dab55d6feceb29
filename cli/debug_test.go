package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// pausedRun is a headless run driven through its pipes: events are read
// from its stdout as they come, answers written to its stdin.
type pausedRun struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan []byte // stdout's lines, read as they come (a pipe's buffer: the run never waits on the test)
	done   chan int
	stderr *strings.Builder
}

func startPaused(t *testing.T, env map[string]string, args ...string) *pausedRun {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &pausedRun{t: t, in: inW, lines: make(chan []byte, 1<<16), done: make(chan int, 1), stderr: &strings.Builder{}}
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			r.lines <- slices.Clone(sc.Bytes())
		}
	}()
	if env == nil {
		env = map[string]string{"AGENTTY_HOME": t.TempDir()}
	}
	env["AGENTTY_CONFIG"] = filepath.Join(t.TempDir(), "none.json")
	go func() {
		code := Execute(context.Background(), args, inR, outW, r.stderr, func(k string) string { return env[k] })
		outW.Close()
		r.done <- code
	}()
	t.Cleanup(func() { inW.Close() })
	return r
}

type wireEvent struct {
	Kind string          `json:"kind"`
	Step int             `json:"step"`
	Data json.RawMessage `json:"data"`
}

// next reads events up to the next of one of kinds; it fails the test if
// the stream ends first.
func (r *pausedRun) next(kinds ...string) wireEvent {
	r.t.Helper()
	for line := range r.lines {
		var ev wireEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			r.t.Fatalf("not an event: %s", line)
		}
		for _, k := range kinds {
			if ev.Kind == k {
				return ev
			}
		}
	}
	r.t.Fatalf("the run ended before any of %v; stderr: %s", kinds, r.stderr)
	return wireEvent{}
}

func (r *pausedRun) answer(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

func (r *pausedRun) exit() int {
	r.t.Helper()
	for range r.lines {
	}
	select {
	case c := <-r.done:
		return c
	case <-time.After(30 * time.Second):
		r.t.Fatal("the run did not end")
		return -1
	}
}

// A headless run with --break and --json is driven through stdin: it
// pauses only at the breakpoint, refuses bad answers (and goes on with the
// next good one), and the model sees the result the person gave.
func TestHeadlessBreakpointDrivenByStdin(t *testing.T) {
	r := startPaused(t, nil, "run", "--model", "offline", "--json", "--break", "tool=calc*", "what is 17*23?")
	ev := r.next("gate_paused")
	var gp struct {
		Reason   string `json:"reason"`
		Break    string `json:"break"`
		ToolCall struct {
			Name string `json:"name"`
		} `json:"tool_call"`
	}
	json.Unmarshal(ev.Data, &gp)
	if gp.Reason != "break" || gp.Break != "tool=calc*" || gp.ToolCall.Name != "calculator" || ev.Step != 1 {
		t.Fatalf("paused: %+v at step %d", gp, ev.Step)
	}
	for _, bad := range []struct{ line, says string }{
		{`not json`, "not a JSON answer"},
		{`{"action":"explode"}`, "unknown action"},
		{`{"action":"edit","arguments":{"expresion":"1+1"}}`, "do not fit calculator"},
		{`{"action":"edit_request","note":"hi"}`, "before a decision"},
	} {
		r.answer(bad.line)
		n := r.next("notice", "gate_resumed")
		if n.Kind != "notice" || !strings.Contains(string(n.Data), bad.says) {
			t.Fatalf("%s: want a notice saying %q, got %s %s", bad.line, bad.says, n.Kind, n.Data)
		}
	}
	r.answer(`{"action":"respond","result":"17*23 = 400"}`)
	res := r.next("tool_finished")
	if !strings.Contains(string(res.Data), `"by":"person"`) {
		t.Errorf("tool_finished does not say the person answered: %s", res.Data)
	}
	fin := r.next("run_finished")
	if !strings.Contains(string(fin.Data), `"answer":"17*23 = 400"`) {
		t.Errorf("the model did not see the person's result: %s", fin.Data)
	}
	if code := r.exit(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr)
	}
}

// --step pauses before each decision and call; edit_request changes what
// the model is sent; continue lets the run go on without pauses; stdin
// ending at a pause aborts the run.
func TestHeadlessStepping(t *testing.T) {
	r := startPaused(t, nil, "run", "--model", "offline", "--json", "--step", "what is 2+3?")
	if ev := r.next("gate_paused"); ev.Step != 1 || !strings.Contains(string(ev.Data), `"at":"decide"`) {
		t.Fatalf("first pause: %s", ev.Data)
	}
	// The pause's request comes next, so that edit_request's indexes are
	// not blind.
	if ev := r.next("pause_request"); !strings.Contains(string(ev.Data), `"content":"what is 2+3?"`) {
		t.Fatalf("the pause's request: %s", ev.Data)
	}
	r.answer(`{"action":"edit_request","messages":[{"index":0,"content":"what is 6*7?"}]}`)
	if ev := r.next("gate_resumed"); !strings.Contains(string(ev.Data), `"edited":"request"`) {
		t.Errorf("gate_resumed after an edit does not say so: %s", ev.Data)
	}
	if ev := r.next("request_edited", "decision"); ev.Kind != "request_edited" {
		t.Fatalf("no request_edited: %s", ev.Data)
	}
	if ev := r.next("decision"); !strings.Contains(string(ev.Data), `6*7`) {
		t.Errorf("the model was not sent the edited message: %s", ev.Data)
	}
	r.next("gate_paused") // before the calculator
	r.answer(`{"action":"continue"}`)
	if fin := r.next("run_finished"); !strings.Contains(string(fin.Data), "42") {
		t.Errorf("answer: %s", fin.Data)
	}
	if code := r.exit(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr)
	}

	r = startPaused(t, nil, "run", "--model", "offline", "--json", "--step", "what is 2+3?")
	r.next("gate_paused")
	r.in.Close()
	if fin := r.next("run_finished"); !strings.Contains(string(fin.Data), "cancelled") {
		t.Errorf("stdin closed at a pause: %s", fin.Data)
	}
	if code := r.exit(); code != 130 {
		t.Errorf("exit %d, want 130", code)
	}
	code, _, errs := runCLI(t, context.Background(), nil, "run", "--model", "offline", "--break", "tool=x", "hi")
	if code != 2 || !strings.Contains(errs, "need --json") {
		t.Errorf("--break without --json: %d %s", code, errs)
	}
	code, _, errs = runCLI(t, context.Background(), nil, "run", "--model", "offline", "--json", "--break", "colour=red", "hi")
	if code != 2 || !strings.Contains(errs, "the conditions are") {
		t.Errorf("a bad --break: %d %s", code, errs)
	}
}

// A replay of a session where the person edited a request and answered
// for a tool gives the same edit and answer at the same pauses: nothing
// differs, and the calculator the person answered for is not run.
func TestReplayReproducesTheDebuggersChanges(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"AGENTTY_HOME": home}
	r := startPaused(t, env, "run", "--model", "offline", "--json", "--step", "what is 17*23?")
	r.next("gate_paused")
	r.answer(`{"action":"edit_request","system":"You are brief."}`)
	r.next("gate_paused") // before the calculator
	r.answer(`{"action":"respond","result":"17*23 = 400"}`)
	r.next("gate_paused") // before the second decision
	r.answer(`{"action":"continue"}`)
	if fin := r.next("run_finished"); !strings.Contains(string(fin.Data), "17*23 = 400") {
		t.Fatalf("recorded run: %s", fin.Data)
	}
	if code := r.exit(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr)
	}
	id := strings.TrimSpace(strings.TrimPrefix(strings.Split(r.stderr.String(), "\n")[0], "session:"))
	code, out, errs := runCLI(t, context.Background(), map[string]string{"AGENTTY_HOME": home}, "replay", "--json", id)
	var rep struct {
		Session     string
		ToolCalls   int `json:"tool_calls"`
		Differences []json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || len(rep.Differences) != 0 || rep.ToolCalls != 1 {
		t.Fatalf("replay: exit %d, %+v (%v)\n%s\n%s", code, rep, err, out, errs)
	}
	code, journal, _ := runCLI(t, context.Background(), map[string]string{"AGENTTY_HOME": home}, "sessions", "export", "--format", "json", rep.Session)
	journal = strings.ReplaceAll(journal, `": "`, `":"`)
	// The calculator's 391 as a result or in the answer (not in a time
	// stamp, which may hold the digits).
	if code != 0 || !strings.Contains(journal, `"kind":"request_edited"`) || !strings.Contains(journal, `"by":"person"`) || strings.Contains(journal, `"result":"391`) || strings.Contains(journal, "= 391") {
		t.Errorf("the replay's journal (exit %d) does not have the edit and the person's result:\n%s", code, journal)
	}
}
