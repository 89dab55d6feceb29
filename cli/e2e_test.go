package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine/enginetest"
)

// tmux drives the console in a real terminal, as a person would.
type tmux struct {
	t      *testing.T
	socket string
	name   string // the tmux session
}

func newTmux(t *testing.T) *tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	// A server per test: a new server on the socket of one that is still
	// exiting fails with "server exited unexpectedly".
	tm := &tmux{t: t, socket: fmt.Sprintf("agentty-e2e-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-")), name: "e2e"}
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.socket, "kill-server").Run() })
	return tm
}

func (tm *tmux) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.socket}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// start runs the console in a new 160×45 window.
func (tm *tmux) start(home string, args ...string) {
	tm.t.Helper()
	tm.startSized(home, 160, 45, args...)
}

// startSized runs the console in a new window of the given size.
func (tm *tmux) startSized(home string, w, h int, args ...string) {
	tm.t.Helper()
	cmd := "AGENTTY_HOME=" + home + " AGENTTY_CONFIG=" + home + "/no-config.json TERM=xterm-256color " + binary + " " + strings.Join(args, " ")
	tm.run("new-session", "-d", "-s", tm.name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), cmd)
	tm.wait("the console", func(s string) bool { return strings.Contains(s, "Input") })
}

func (tm *tmux) screen() string { return tm.run("capture-pane", "-t", tm.name, "-p") }

func (tm *tmux) keys(keys ...string) {
	tm.run(append([]string{"send-keys", "-t", tm.name}, keys...)...)
}

// wait polls the screen until cond holds, for up to 10 s.
func (tm *tmux) wait(what string, cond func(screen string) bool) string {
	tm.t.Helper()
	// A hang, not a speed limit: a console on a machine busy with
	// another test suite has taken more than 10 s to draw a frame.
	deadline := time.Now().Add(time.Minute)
	for {
		s := tm.screen()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("waiting for %s; the screen shows:\n%s", what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitArmed waits for a pause bar showing text whose keys are armed: a
// pause ignores keys for a moment after it is drawn (ui.PauseGrace).
func (tm *tmux) waitArmed(what, text string) string {
	tm.t.Helper()
	return tm.wait(what+", its keys armed", func(s string) bool {
		return strings.Contains(s, text) && !strings.Contains(s, "keys are armed once you stop typing")
	})
}

// waitGone waits for the console to exit.
func (tm *tmux) waitGone() {
	tm.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for exec.Command("tmux", "-L", tm.socket, "has-session", "-t", tm.name).Run() == nil {
		if time.Now().After(deadline) {
			tm.t.Fatalf("the console did not quit:\n%s", tm.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// column returns the text of columns [from, to) of every line.
func column(screen string, from, to int) string {
	var b strings.Builder
	for _, l := range strings.Split(screen, "\n") {
		r := []rune(l)
		if from < len(r) {
			b.WriteString(string(r[from:min(to, len(r))]))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// The panes at 160 columns: Chat 0–76, Timeline 76–124, Memory 124–160.
func chatPane(s string) string     { return column(s, 0, 76) }
func timelinePane(s string) string { return column(s, 76, 124) }
func memoryPane(s string) string   { return column(s, 124, 160) }

func TestConsoleInTmux(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()

	tm.start(home, "--model", "offline")
	tm.keys("what is 17*23?", "Enter")
	tm.wait("391 in the chat and a calculator row in the timeline", func(s string) bool {
		return strings.Contains(chatPane(s), "391") && strings.Contains(timelinePane(s), "calculator")
	})
	tm.keys("remember that my name is Ada", "Enter")
	tm.wait("name in the memory pane", func(s string) bool { return strings.Contains(memoryPane(s), "name = Ada") })
	tm.keys("C-d")
	tm.waitGone()

	entries, err := os.ReadDir(home + "/sessions")
	if err != nil || len(entries) != 1 {
		t.Fatalf("sessions: %v %v", entries, err)
	}
	id := entries[0].Name()
	tm.start(home, "--resume", id)
	tm.wait("the earlier chat", func(s string) bool {
		return strings.Contains(chatPane(s), "remember that my name is Ada") && strings.Contains(memoryPane(s), "name = Ada") &&
			strings.Contains(s, "session "+id)
	})
	tm.keys("C-d")
	tm.waitGone()

	tm.start(home, "--model", "offline", "--step")
	tm.keys("what is 6*7?", "Enter")
	tm.waitArmed("the pause before deciding", "Paused before deciding")
	tm.keys("Enter")
	tm.waitArmed("the pause before the tool call", "Paused before calling calculator")
	tm.keys("Enter")
	tm.waitArmed("the pause before the second decision", "Paused before deciding (step 2)")
	tm.keys("Enter")
	tm.wait("the answer", func(s string) bool { return strings.Contains(chatPane(s), "6*7 = 42") && strings.Contains(s, "idle") })
	tm.keys("C-c", "C-c") // the second quits: the first asks
	tm.waitGone()
}

// TestSecondConsoleIsReadOnly opens a session in two consoles: the second
// shows it read-only and refuses to run.
func TestSecondConsoleIsReadOnly(t *testing.T) {
	first := newTmux(t)
	home := t.TempDir()
	first.start(home, "--model", "offline")
	first.keys("what is 2+2", "Enter")
	first.wait("the answer", func(s string) bool { return strings.Contains(chatPane(s), "2+2 = 4") })
	entries, _ := os.ReadDir(home + "/sessions")
	id := entries[0].Name()

	second := &tmux{t: t, socket: first.socket, name: "second"}
	second.start(home, "--resume", id)
	second.wait("the read-only notice and the earlier chat", func(s string) bool {
		return strings.Contains(s, "Read-only: session "+id+" is open in another agentty") && strings.Contains(chatPane(s), "2+2 = 4")
	})
	if s := second.screen(); strings.Contains(s, "Ask the agent") || !strings.Contains(s, "ctrl+o opens another session") {
		t.Errorf("the read-only console's input invites a task:\n%s", s)
	}
	second.keys("what is 3+3", "Enter")
	second.wait("the refusal", func(s string) bool { return strings.Contains(s, "this session is read-only") })
	second.keys("C-d")
	second.waitGone()
	first.keys("C-d")
	first.waitGone()
}

// TestQuitDuringRunIsJournaled quits the console while a run waits for a
// slow model: the run's end is in the journal, not left interrupted.
func TestQuitDuringRunIsJournaled(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	sc := writeScript(t, `{"turns":[{"answer":"late","delay_ms":30000}]}`)
	tm.start(home, "--model", "script:"+sc)
	tm.keys("take your time", "Enter")
	tm.wait("the run to start", func(s string) bool { return strings.Contains(s, "thinking") })
	tm.keys("C-c")
	tm.keys("C-c")
	tm.waitGone()
	entries, _ := os.ReadDir(home + "/sessions")
	if len(entries) != 1 {
		t.Fatalf("sessions: %v", entries)
	}
	b, err := os.ReadFile(home + "/sessions/" + entries[0].Name() + "/events.jsonl")
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if err != nil || !strings.Contains(lines[len(lines)-1], `"kind":"run_finished"`) || !strings.Contains(lines[len(lines)-1], `"stop_reason":"cancelled"`) {
		t.Errorf("last journal line: %q (%v)", lines[len(lines)-1], err)
	}
}

// TestConsoleWithAServer runs the console against an in-process
// OpenAI-compatible server that streams a tool call, then an answer.
func TestConsoleWithAServer(t *testing.T) {
	srv := enginetest.NewServerFunc(t, func(n int, _ enginetest.Request) enginetest.Reply {
		if n%2 == 1 {
			return enginetest.Reply{Body: enginetest.ToolCallStream("call_1", "calculator", `{"expression":"6*7"}`, 1)}
		}
		// Slowly enough to be seen streaming.
		return enginetest.Reply{Gap: 30 * time.Millisecond, Body: enginetest.Answer("The ", "answer ", "is ", "**42**.")}
	})
	tm := newTmux(t)
	tm.start(t.TempDir(), "--base-url", srv.URL(), "--model", "local-model")
	tm.keys("what is 6*7?", "Enter")
	s := tm.wait("the streamed answer", func(s string) bool {
		return strings.Contains(chatPane(s), "The answer is 42.") && strings.Contains(timelinePane(s), "calculator") && strings.Contains(s, "idle")
	})
	if !strings.Contains(s, "model local-model") || !strings.Contains(s, "session ") {
		t.Errorf("status line:\n%s", s)
	}
	tm.keys("C-d")
	tm.waitGone()
}

// idleWith reports whether the status line says idle and what.
func idleWith(screen, what string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, " · idle · ") && strings.Contains(l, what) {
			return true
		}
	}
	return false
}

// alive fails the test when the console has exited.
func (tm *tmux) alive(what string) {
	tm.t.Helper()
	if exec.Command("tmux", "-L", tm.socket, "has-session", "-t", tm.name).Run() != nil {
		tm.t.Fatalf("the console exited after %s", what)
	}
	tm.wait("the console after "+what, func(s string) bool {
		return strings.Contains(s, "Input") || strings.Contains(s, "Sessions") || strings.Contains(s, "All keys")
	})
}

// A fresh console on a real model (so the chat starts empty): every
// navigation key in every pane, before the first message, at a wide and a
// narrow size, and the console stays up and still answers.
func TestEmptyConsoleSurvivesEveryKey(t *testing.T) {
	srv := enginetest.NewServerFunc(t, func(int, enginetest.Request) enginetest.Reply {
		return enginetest.Reply{Body: enginetest.SSE(enginetest.TextChunk("still here"), enginetest.FinishChunk("stop"))}
	})
	const wheelUp, wheelDown, click = "\x1b[<64;10;5M", "\x1b[<65;10;5M", "\x1b[<0;20;6M\x1b[<0;20;6m"
	for _, size := range [][2]int{{160, 45}, {80, 24}} {
		tm := newTmux(t)
		tm.name = fmt.Sprintf("keys-%dx%d", size[0], size[1])
		tm.startSized(t.TempDir(), size[0], size[1], "--base-url", srv.URL(), "--model", "local-model")
		for pane := range 4 {
			for _, k := range []string{"PPage", "NPage", "Up", "Down", "Home", "End", "Enter", "?", "?", "C-o", "Escape", "Escape", "C-x", "C-x", "Left", "Right"} {
				tm.keys(k)
				tm.alive(fmt.Sprintf("%s in pane %d at %dx%d", k, pane, size[0], size[1]))
			}
			for _, seq := range []string{wheelUp, wheelDown, wheelUp, click} {
				tm.run("send-keys", "-t", tm.name, "-l", seq)
				tm.alive(fmt.Sprintf("a mouse event %q in pane %d at %dx%d", seq, pane, size[0], size[1]))
			}
			tm.keys("Tab")
		}
		tm.keys("Escape")
		tm.keys("hello", "Enter")
		tm.wait("the answer after all those keys", func(s string) bool { return strings.Contains(s, "still here") })
		tm.keys("C-d")
		tm.waitGone()
	}
}

// TestConsoleDelegationInTmux: with an agent defined in the person's agents
// folder, the offline model delegates "ask the mathematician agent to …"
// twice at once; the Chat shows one line per delegation that ctrl+x opens
// to the sub-agent's calculator call and answer, and the Timeline folds the
// finished sub-runs under their calls and unfolds one with z.
func TestConsoleDelegationInTmux(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	writeAgent(t, filepath.Join(home, "agents"), "mathematician.md", agentFile("mathematician", "tools: [calculator]\n", "You do sums."))
	tm.start(home, "--model", "offline")
	tm.keys("ask the mathematician agent to work out 17*23 and the mathematician agent to work out 6*7", "Enter")
	s := tm.wait("two delegation lines and the answer", func(s string) bool {
		c := chatPane(s)
		return strings.Count(c, "⚙ agent mathematician") == 2 && strings.Contains(c, "mathematician says: 17*23 = 391") && strings.Contains(s, "idle")
	})
	if c := chatPane(s); !strings.Contains(c, "work out 17*23 and the mathematician") || !strings.Contains(c, "work out 6*7") || !strings.Contains(c, "says: 6*7 = 42") {
		t.Errorf("the message is not shown as typed:\n%s", s)
	}
	if n := strings.Count(timelinePane(s), "▸ agent mathematici"); n != 2 {
		t.Errorf("%d folded agent rows in the timeline, want 2:\n%s", n, s)
	}
	tm.keys("C-x")
	tm.wait("the sub-agents' calculator calls in the chat", func(s string) bool {
		return strings.Contains(chatPane(s), `calculator expression="17*23"`) && strings.Contains(chatPane(s), `calculator expression="6*7"`)
	})
	// To the Timeline (input → chat → timeline), up to the second agent
	// row, and unfold it.
	tm.keys("Tab", "Tab", "Up", "Up", "Up", "Up", "z")
	tm.wait("an unfolded sub-run with its calculator row", func(s string) bool {
		tl := timelinePane(s)
		return strings.Contains(tl, "▾ agent mathematici") && strings.Contains(tl, "  ⚙ ") && strings.Contains(tl, "calculator")
	})
	tm.keys("C-c", "C-c") // the second quits: the first asks
	tm.waitGone()
}

// TestSlashCompactInTmux: /compact after a few offline turns: the offline
// model summarises extractively, a compaction row appears in the Timeline,
// the Chat keeps every message, and the journal has the compaction.
func TestSlashCompactInTmux(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	tm.start(home, "--model", "offline")
	for i, task := range []string{"what is 17*23?", "remember that my name is Ada", "what is 2+2?"} {
		tm.keys(task, "Enter")
		tm.wait(fmt.Sprintf("run %d to end", i+1), func(s string) bool { return strings.Contains(s, fmt.Sprintf("step %d · idle", 2*(i+1))) })
	}
	tm.keys("/comp")
	tm.wait("the list of commands", func(s string) bool { return strings.Contains(s, "Commands (tab completes") })
	tm.keys("Tab")
	tm.keys("my name", "Enter")
	s := tm.wait("the compaction's row and note", func(s string) bool {
		return strings.Contains(timelinePane(s), "⇊") && strings.Contains(chatPane(s), "summarised for the model") && strings.Contains(s, "idle")
	})
	for _, msg := range []string{"what is 17*23?", "17*23 = 391", "remember that my name is Ada", "2+2 = 4"} {
		if !strings.Contains(chatPane(s), msg) {
			t.Errorf("the Chat lost %q after the compaction:\n%s", msg, s)
		}
	}
	tm.keys("C-d")
	tm.waitGone()
	entries, err := os.ReadDir(filepath.Join(home, "sessions"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("sessions: %v %v", entries, err)
	}
	b, err := os.ReadFile(filepath.Join(home, "sessions", entries[0].Name(), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"kind":"context_compacted"`) || !strings.Contains(string(b), `"focus":"my name"`) {
		t.Fatalf("the journal has no compaction with its focus:\n%s", b)
	}
}

// TestSlashModelInTmux: /model offline on a session that ran a script
// model: the status line says offline and the next run runs on it
// (journaled: model_changed, then run_started naming offline); an unknown
// model is one line and changes nothing; a resume keeps the model picked.
func TestSlashModelInTmux(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	script := filepath.Join(home, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"answer":"scripted answer"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func(args ...string) {
		cmd := "OPENAI_API_KEY= OPENAI_BASE_URL= AGENTTY_MODEL= AGENTTY_HOME=" + home + " AGENTTY_CONFIG=" + home + "/no-config.json TERM=xterm-256color " +
			binary + " " + strings.Join(args, " ")
		tm.run("new-session", "-d", "-s", tm.name, "-x", "160", "-y", "45", cmd)
		tm.wait("the console", func(s string) bool { return strings.Contains(s, "Input") })
	}
	start("--model", "script:"+script)
	tm.keys("hello", "Enter")
	tm.wait("the scripted answer", func(s string) bool {
		return strings.Contains(chatPane(s), "scripted answer") && idleWith(s, "model script:")
	})
	tm.keys("/model nope", "Enter")
	s := tm.wait("one line about the model", func(s string) bool { return strings.Contains(chatPane(s), `/model: model "nope"`) })
	if !strings.Contains(s, "model script:") {
		t.Fatalf("an unknown model changed the status line:\n%s", s)
	}
	tm.keys("/model offline", "Enter")
	tm.wait("the status line on offline", func(s string) bool {
		return idleWith(s, "model offline") && strings.Contains(chatPane(s), "Model offline from the next run")
	})
	tm.keys("what is 6*7?", "Enter")
	tm.wait("the offline answer", func(s string) bool {
		return strings.Contains(chatPane(s), "6*7 = 42") && idleWith(s, "model offline")
	})
	tm.keys("C-d")
	tm.waitGone()

	entries, err := os.ReadDir(filepath.Join(home, "sessions"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("sessions: %v %v", entries, err)
	}
	id := entries[0].Name()
	b, err := os.ReadFile(filepath.Join(home, "sessions", id, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	j := string(b)
	changed, second := strings.Index(j, `"kind":"model_changed"`), strings.LastIndex(j, `"model":"offline","max_steps"`)
	if changed < 0 || second < changed || strings.Count(j, `"kind":"model_changed"`) != 1 {
		t.Fatalf("the journal does not have one model_changed before a run on offline:\n%s", j)
	}
	start("--resume", id)
	tm.wait("the resumed session on offline", func(s string) bool { return strings.Contains(s, "model offline") && strings.Contains(s, "session "+id) })
	tm.keys("C-d")
	tm.waitGone()
}

// TestWorkflowInTmux: /workflow arithmetic (the offline example, in the
// user's workflows folder): its steps appear in the Timeline, each with a
// row, and the answer has 391; f on the row of the first step's observe
// forks the session there and opens the fork, whose workflow ctrl+r
// continues to the same answer; the picker shows the fork's parent.
func TestWorkflowInTmux(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "examples", "workflows", "arithmetic.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, "workflows"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "workflows", "arithmetic.yaml"), src, 0o600); err != nil {
		t.Fatal(err)
	}
	tm.start(home, "--model", "offline")
	tm.keys("/workflow nope", "Enter")
	tm.wait("one line for an unknown workflow", func(s string) bool {
		return strings.Contains(chatPane(s), `no workflow is called "nope"`)
	})
	tm.keys("/workflow arith", "Tab")
	tm.wait("the name completed", func(s string) bool { return strings.Contains(s, "/workflow arithmetic ") })
	tm.keys("Enter")
	s := tm.wait("the steps and the answer", func(s string) bool {
		return strings.Contains(chatPane(s), "remembered: product is 17*23 = 391") && strings.Contains(s, "idle")
	})
	for _, step := range []string{"step product", "step check", "step remember", "step recall"} {
		if !strings.Contains(timelinePane(s), step) {
			t.Errorf("no row of %s in the Timeline:\n%s", step, s)
		}
		if !strings.Contains(chatPane(s), "▣ "+step+":") {
			t.Errorf("no line of %s in the Chat:\n%s", step, s)
		}
	}
	// To the Timeline, and up from the end (■ answered) to the observe
	// row of step 1: the rows of steps 8, 5 and 2 are 14.
	tm.keys("Tab", "Tab")
	for range 15 {
		tm.keys("Up")
	}
	tm.keys("f") // the first asks
	tm.wait("f to ask for enter", func(s string) bool { return strings.Contains(s, "enter forks") })
	tm.keys("Enter")
	tm.wait("the fork open", func(s string) bool {
		return strings.Contains(chatPane(s), "A fork of") && strings.Contains(chatPane(s), "at step 1.") &&
			strings.Contains(chatPane(s), "ctrl+r to continue")
	})
	tm.keys("C-r")
	s = tm.wait("the fork's workflow to go on to its answer", func(s string) bool {
		return strings.Contains(chatPane(s), "remembered: product is 17*23 = 391") && strings.Contains(s, "idle")
	})
	if !strings.Contains(timelinePane(s), "step recall") {
		t.Errorf("the continued workflow's steps are not in the Timeline:\n%s", s)
	}
	tm.keys("C-o")
	tm.wait("the picker showing the fork's parent", func(s string) bool { return strings.Contains(s, "fork of ") && strings.Contains(s, "at step 1 ·") })
	tm.keys("Escape")
	tm.wait("the picker closed", func(s string) bool { return !strings.Contains(s, "Sessions — enter opens") })
	tm.keys("C-d")
	tm.waitGone()
}

// TestSearchInTmux: in a home with one past offline session, ctrl+f and
// "retry policy" list the session's hits; enter opens the first, the
// Timeline's cursor on its step.
func TestSearchInTmux(t *testing.T) {
	tm := newTmux(t)
	home, ws := t.TempDir(), t.TempDir()
	run := exec.Command(binary, "run", "--model", "offline", "--workspace", ws, "remember that the retry policy is five attempts")
	run.Env = append(os.Environ(), "AGENTTY_HOME="+home, "AGENTTY_CONFIG="+home+"/no-config.json")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("agentty run: %v\n%s", err, out)
	}
	entries, err := os.ReadDir(filepath.Join(home, "sessions"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("sessions: %v %v", entries, err)
	}
	past := entries[0].Name()

	tm.start(home, "--model", "offline", "--workspace", ws)
	tm.keys("C-f")
	tm.wait("the search", func(s string) bool { return strings.Contains(s, "Search sessions and files") })
	tm.keys("retry policy", "Enter")
	s := tm.wait("the session's hits", func(s string) bool {
		return strings.Contains(s, "hits for \"retry policy\" in all") && strings.Contains(s, "› 1. session "+past+", step ")
	})
	if !strings.Contains(s, "remember that the retry policy is five attempts") {
		t.Fatalf("the hits do not show the session's text:\n%s", s)
	}
	tm.keys("Enter")
	tm.wait("the past session open at the hit's step", func(s string) bool {
		return strings.Contains(s, "session "+past) && strings.Contains(chatPane(s), "remember that the retry policy is five attempts") &&
			strings.Contains(s, "found") && !strings.Contains(s, "Search sessions and files")
	})
	tm.keys("C-d")
	tm.waitGone()
}

// TestConsoleAsksThePerson: the offline model asks (ask_user), the
// question is in the pause bar, the person types the answer, and it is
// remembered; the question and the answer are journaled, by the console.
func TestConsoleAsksThePerson(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	tm.start(home, "--model", "offline")
	tm.keys("ask me for my name and remember it", "Enter")
	tm.waitArmed("the question in the pause bar", "? What is your name?")
	tm.keys("Ada Lovelace")
	tm.wait("the answer typed", func(s string) bool { return strings.Contains(s, "> Ada Lovelace") })
	tm.keys("Enter")
	tm.wait("the answer remembered", func(s string) bool { return strings.Contains(memoryPane(s), "name = Ada Lovelace") })
	tm.keys("C-d")
	tm.waitGone()
	entries, err := os.ReadDir(home + "/sessions")
	if err != nil || len(entries) != 1 {
		t.Fatalf("sessions: %v %v", entries, err)
	}
	b, _ := os.ReadFile(filepath.Join(home, "sessions", entries[0].Name(), "events.jsonl"))
	if !strings.Contains(string(b), `"kind":"question_asked"`) || !strings.Contains(string(b), `"answer":"Ada Lovelace","by":"the console"`) {
		t.Errorf("the journal lacks the question or its answer:\n%s", b)
	}
}
