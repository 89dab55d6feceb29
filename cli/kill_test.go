package cli

import (
	"bufio"
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

// binary is agentty built once by TestMain for tests that run it as a child
// process.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentty-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "agentty")
	if out, err := exec.Command("go", "build", "-o", binary, "..").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildBinary(t *testing.T) string { return binary }

// TestResumeAcrossProcesses remembers a fact in one process and recalls it
// in another, through the session on disk.
func TestResumeAcrossProcesses(t *testing.T) {
	home := t.TempDir()
	run := func(args ...string) (string, string) {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), "AGENTTY_HOME="+home)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("agentty %v: %v\n%s", args, err, errb.String())
		}
		return out.String(), errb.String()
	}
	_, errs := run("run", "--model", "offline", "remember that my name is Ada")
	id := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(errs), "session:"))
	out, _ := run("run", "--session", id, "--model", "offline", "what is my name?")
	if !strings.Contains(out, "Ada") {
		t.Errorf("second process answered %q, want Ada", out)
	}
	out, _ = run("sessions", "ls")
	if !strings.Contains(out, id) || !strings.Contains(out, "remember that my name is Ada") {
		t.Errorf("ls = %q", out)
	}
}

type evKey struct {
	kind engine.Kind
	step int
	time int64
}

// TestKillAnywhere kills a child running a slow scripted run at random
// points with SIGKILL, and checks each time that the journal opens, that
// every event the child reported before it died is in the journal, and that
// --continue finishes the run without running a journaled tool call again.
func TestKillAnywhere(t *testing.T) {
	bin := buildBinary(t)
	const turns = 8
	var sb strings.Builder
	sb.WriteString(`{"turns":[`)
	for i := range turns {
		fmt.Fprintf(&sb, `{"delay_ms":12,"tool_calls":[{"name":"remember","arguments":{"key":"k%d","value":"%d"}},{"name":"calculator","arguments":{"expression":"%d*2"}}]},`, i, i, i)
	}
	sb.WriteString(`{"answer":"all done"}]}`)
	scriptPath := writeScript(t, sb.String())
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	t.Logf("seed %d", seed)
	// Kill points are picked among the events a whole run prints (not by
	// time: a run faster than expected finished before a timed kill).
	whole, err := exec.Command(bin, "run", "--data-dir", t.TempDir(), "--json", "--model", "script:"+scriptPath, "go").Output()
	if err != nil {
		t.Fatalf("a whole run: %v", err)
	}
	total := strings.Count(string(whole), "\n")
	const points = 24
	continued := 0
	for i := range points {
		home := t.TempDir()
		cmd := exec.Command(bin, "run", "--data-dir", home, "--json", "--model", "script:"+scriptPath, "go")
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan []byte, 1000)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- append([]byte(nil), sc.Bytes()...)
			}
			close(lines)
		}()
		first, ok := <-lines
		if !ok {
			t.Fatalf("point %d: the child printed nothing", i)
		}
		acked := [][]byte{first}
		for k := 1 + rng.IntN(total-1); len(acked) < k; {
			l, ok := <-lines
			if !ok {
				break
			}
			acked = append(acked, l)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		for l := range lines {
			acked = append(acked, l)
		}
		var ev engine.Event
		json.Unmarshal(first, &ev)
		id := ev.Session

		store, _ := sessions.Open(home)
		l, err := store.Load(id)
		if err != nil {
			t.Fatalf("point %d: journal does not open after kill: %v", i, err)
		}
		inJournal := map[evKey]bool{}
		for _, e := range l.Events {
			inJournal[evKey{e.Kind, e.Step, e.Time.UnixNano()}] = true
		}
		for _, a := range acked {
			var e engine.Event
			if err := json.Unmarshal(a, &e); err != nil {
				continue // the child died mid-line on stdout
			}
			if !inJournal[evKey{e.Kind, e.Step, e.Time.UnixNano()}] {
				t.Errorf("point %d: event %s of step %d was reported but is not in the journal", i, e.Kind, e.Step)
			}
		}

		out, err := exec.Command(bin, "run", "--data-dir", home, "--session", id, "--continue", "--yes").CombinedOutput()
		if !l.Session.Interrupted() {
			if err == nil || !strings.Contains(string(out), "no interrupted run") {
				t.Errorf("point %d: continuing a finished run: %v %s", i, err, out)
			}
			continue
		}
		continued++
		if err != nil || !strings.Contains(string(out), "all done") {
			t.Fatalf("point %d (killed after %d events): --continue failed: %v\n%s", i, len(l.Events), err, out)
		}
		final, err := store.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		finished := map[string]int{}
		decisions := 0
		for _, e := range final.Events {
			switch d := e.Data.(type) {
			case *engine.ToolFinished:
				finished[d.ID]++
				if finished[d.ID] > 1 {
					t.Errorf("point %d: tool call %s has %d results: a journaled call ran again", i, d.ID, finished[d.ID])
				}
			case *engine.Decided:
				decisions++
			}
		}
		if decisions != turns+1 || len(finished) != 2*turns || len(final.Session.Memory()) != turns || final.Session.Interrupted() {
			t.Errorf("point %d: after --continue: %d decisions, %d tool results, %d facts, interrupted %v", i, decisions, len(finished), len(final.Session.Memory()), final.Session.Interrupted())
		}
	}
	t.Logf("%d kill points, %d runs continued", points, continued)
	if continued < points/2 {
		t.Errorf("only %d of %d kills landed mid-run", continued, points)
	}
}
