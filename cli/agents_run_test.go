package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// scriptAgents writes agent files into the user's agents folder of env
// (beside its AGENTTY_CONFIG), each with model script:FILE relative to the
// agent file, the script beside it.
func scriptAgents(t *testing.T, env map[string]string, agents map[string]string) {
	t.Helper()
	dir := filepath.Join(filepath.Dir(env["AGENTTY_CONFIG"]), "agents")
	for name, script := range agents {
		writeAgent(t, dir, name+".json", script)
		writeAgent(t, dir, name+".md", agentFile(name, "model: script:"+name+".json\n", "You are "+name+"."))
	}
}

// jsonEvents parses run --json output.
func jsonEvents(t *testing.T, out string) []engine.Event {
	t.Helper()
	var evs []engine.Event
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		ev, err := engine.DecodeEvent(sc.Bytes())
		if err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestScriptAgentsInParallel: two agent calls in one decision, each
// sub-agent's scripted model taking 500 ms, run at once (the sub-runs
// overlap, by the events' times), every sub-run event carries its agent,
// parent run and call, and the answer is built from both results.
func TestScriptAgentsInParallel(t *testing.T) {
	env := agentEnv(t)
	slow := func(answer string) string {
		return `{"turns":[{"delay_ms":500,"answer":"` + answer + `"}]}`
	}
	scriptAgents(t, env, map[string]string{"researcher": slow("three moons"), "writer": slow("a haiku")})
	top := writeScript(t, `{"turns":[{"tool_calls":[{"id":"r","name":"agent","arguments":{"agent":"researcher","task":"count moons"}},{"id":"w","name":"agent","arguments":{"agent":"writer","task":"write"}}]},{"answer":"both done"}]}`)
	code, out, errs := runCLI(t, context.Background(), env, "run", "--workspace", t.TempDir(), "--model", "script:"+top, "--json", "go")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	evs := jsonEvents(t, out)
	times := map[string][2]time.Time{}
	results := map[string]string{}
	for _, ev := range evs {
		if ev.ParentRun != "" {
			agent := map[string]string{"r": "researcher", "w": "writer"}[ev.ParentCall]
			if ev.ParentRun != "run-1" || agent == "" || ev.Agent != agent || ev.Run != "run-1/1/"+ev.ParentCall {
				t.Errorf("sub-run event without its envelope: %+v", ev)
			}
			tt := times[ev.Run]
			switch ev.Kind {
			case engine.KindRunStarted:
				tt[0] = ev.Time
			case engine.KindRunFinished:
				tt[1] = ev.Time
			}
			times[ev.Run] = tt
		}
		if f, ok := ev.Data.(*engine.ToolFinished); ok && ev.Run == "run-1" {
			results[f.ID] = f.Result
		}
	}
	r, w := times["run-1/1/r"], times["run-1/1/w"]
	if r[0].IsZero() || r[1].IsZero() || w[0].IsZero() || w[1].IsZero() {
		t.Fatalf("sub-runs: %v", times)
	}
	if !r[0].Before(w[1]) || !w[0].Before(r[1]) {
		t.Errorf("the sub-runs did not overlap: researcher %v, writer %v", r, w)
	}
	if results["r"] != "three moons" || results["w"] != "a haiku" {
		t.Errorf("results %v", results)
	}
	// sessions show prints each sub-run under the step that delegated, in
	// the decision's order.
	_, show, _ := runCLI(t, context.Background(), env, "sessions", "show", evs[0].Session)
	r0, w0 := strings.Index(show, "↳ agent researcher (run-1/1/r):"), strings.Index(show, "↳ agent writer (run-1/1/w):")
	if r0 < 0 || w0 < r0 || !strings.Contains(show, "answer: three moons") {
		t.Errorf("sessions show:\n%s", show)
	}
}

// TestKillInsideSubRuns kills a child running a run that delegates to two
// scripted agents at once, at random points with SIGKILL (most of them
// inside the sub-runs), and checks each time that --continue --yes
// finishes the run without running any journaled tool call again, in the
// top-level run or in a sub-run.
func TestKillInsideSubRuns(t *testing.T) {
	bin := buildBinary(t)
	const turns = 4
	worker := func(name string) string {
		var sb strings.Builder
		sb.WriteString(`{"turns":[`)
		for i := range turns {
			fmt.Fprintf(&sb, `{"delay_ms":12,"tool_calls":[{"name":"remember","arguments":{"key":"%s%d","value":"%d"}},{"name":"calculator","arguments":{"expression":"%d*2"}}]},`, name, i, i, i)
		}
		sb.WriteString(`{"answer":"` + name + ` done"}]}`)
		return sb.String()
	}
	env := agentEnv(t)
	scriptAgents(t, env, map[string]string{"a": worker("a"), "b": worker("b")})
	top := writeScript(t, `{"turns":[{"tool_calls":[{"name":"agent","arguments":{"agent":"a","task":"work"}},{"name":"agent","arguments":{"agent":"b","task":"work"}}]},{"answer":"all done"}]}`)
	ws := t.TempDir()
	start := func(home string) (*exec.Cmd, *bufio.Scanner) {
		cmd := exec.Command(bin, "run", "--workspace", ws, "--data-dir", home, "--json", "--model", "script:"+top, "go")
		cmd.Env = append(os.Environ(), "AGENTTY_CONFIG="+env["AGENTTY_CONFIG"], "HOME="+env["HOME"])
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, bufio.NewScanner(stdout)
	}
	// A run to the end counts the events a run prints, so that the kill
	// points are picked among them: a point picked by time lands after the
	// end whenever the machine runs the child faster than the test expects.
	cmd, sc := start(t.TempDir())
	total := 0
	for sc.Scan() {
		total++
	}
	if err := cmd.Wait(); err != nil || total < 10 {
		t.Fatalf("a run to the end printed %d events: %v", total, err)
	}
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 2))
	t.Logf("seed %d, %d events in a whole run", seed, total)
	const points = 16
	continued, inside := 0, 0
	for i := range points {
		home := t.TempDir()
		cmd, sc := start(home)
		if !sc.Scan() {
			t.Fatalf("point %d: the child printed nothing", i)
		}
		var ev engine.Event
		json.Unmarshal(sc.Bytes(), &ev)
		id := ev.Session
		// Kill after the k-th event printed, k in [1, total): the child goes
		// on for as long as the kill takes to land, so the point is a floor.
		for k := 1 + rng.IntN(total-1); k > 1 && sc.Scan(); k-- {
		}
		cmd.Process.Signal(syscall.SIGKILL)
		go func() {
			for sc.Scan() {
			}
		}()
		cmd.Wait()

		store, _ := sessions.Open(home)
		l, err := store.Load(id)
		if err != nil {
			t.Fatalf("point %d: journal does not open after kill: %v", i, err)
		}
		c := exec.Command(bin, "run", "--workspace", ws, "--data-dir", home, "--session", id, "--continue", "--yes")
		c.Env = cmd.Env
		out, err := c.CombinedOutput()
		if !l.Session.Interrupted() {
			continue
		}
		continued++
		open := map[string]bool{}
		for _, e := range l.Events {
			if e.ParentRun != "" && e.Kind == engine.KindRunStarted {
				open[e.Run] = true
			}
			if e.ParentRun != "" && e.Kind == engine.KindRunFinished {
				delete(open, e.Run)
			}
		}
		if len(open) > 0 {
			inside++
		}
		if err != nil || !strings.Contains(string(out), "all done") {
			t.Fatalf("point %d (killed after %d events): --continue failed: %v\n%s", i, len(l.Events), err, out)
		}
		final, err := store.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		finished := map[string]int{}
		for _, e := range final.Events {
			if d, ok := e.Data.(*engine.ToolFinished); ok {
				k := e.Run + " " + d.ID
				if finished[k]++; finished[k] > 1 {
					t.Errorf("point %d: tool call %s has %d results: a journaled call ran again", i, k, finished[k])
				}
			}
		}
		// 2 agent calls, and 2 calls a turn in each sub-run.
		if len(finished) != 2+2*2*turns || len(final.Session.Memory()) != 2*turns || final.Session.Interrupted() {
			t.Errorf("point %d: after --continue: %d tool results, %d facts, interrupted %v", i, len(finished), len(final.Session.Memory()), final.Session.Interrupted())
		}
		for _, sub := range []string{"a", "b"} {
			var runs int
			for _, e := range final.Events {
				if e.Kind == engine.KindRunStarted && e.Agent == sub {
					runs++
				}
			}
			if runs != 1 {
				t.Errorf("point %d: agent %s started %d times", i, sub, runs)
			}
		}
	}
	t.Logf("%d kill points, %d runs continued, %d of them inside a sub-run", points, continued, inside)
	if continued < points/2 || inside < points/4 {
		t.Errorf("only %d of %d kills landed mid-run, %d inside a sub-run", continued, points, inside)
	}
}
