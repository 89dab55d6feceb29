package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDailyInputInTmux drives the console as a person who lives in it:
// an answer that looks like HTML is shown whole; a message typed while a
// run goes on is queued and sent after it; ctrl+c clears a draft, then
// asks, and only then quits.
func TestDailyInputInTmux(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	// Each run decides from the script's first turn: both runs answer so.
	sc := writeScript(t, `{"turns":[{"answer":"Use Vec<String> and Option<T>; wrap it in a <div> tag. In Java: List<Integer> xs","delay_ms":1500}]}`)
	tm.start(home, "--model", "script:"+sc)
	tm.keys("first question", "Enter")
	tm.wait("the run to start", func(s string) bool { return strings.Contains(s, "thinking") })
	tm.keys("second question", "Enter")
	tm.wait("the message queued", func(s string) bool { return strings.Contains(s, "queued 1: second question") })
	tm.wait("the HTML-looking answer whole, then the queued message sent", func(s string) bool {
		chat := chatPane(s)
		return strings.Contains(chat, "Use Vec<String> and Option<T>; wrap it in a <div> tag.") && strings.Count(chat, "List<Integer> xs") == 2 &&
			strings.Contains(chat, "second question") && strings.Contains(timelinePane(s), "▶ second question") && !strings.Contains(s, "queued 1")
	})
	tm.keys("a draft I do not want")
	tm.wait("the draft", func(s string) bool { return strings.Contains(s, "a draft I do not want") })
	tm.keys("C-c")
	tm.wait("the draft cleared", func(s string) bool {
		return !strings.Contains(s, "a draft I do not want") && strings.Contains(s, "draft cleared")
	})
	tm.keys("C-c")
	tm.wait("the question before quitting", func(s string) bool { return strings.Contains(s, "ctrl+c again quits") })
	tm.keys("C-c")
	tm.waitGone()
}

// TestHistoryAndDraftSurviveARestart: a message sent before a restart is
// back with ↑, and a draft left in a session's input is back when the
// session is resumed.
func TestHistoryAndDraftSurviveARestart(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	tm.start(home, "--model", "offline")
	tm.keys("what is 2+2?", "Enter")
	tm.wait("the answer", func(s string) bool {
		return strings.Contains(chatPane(s), "2+2 = 4") && strings.Contains(s, "· idle ·")
	})
	tm.keys("a thought for later")
	tm.wait("the draft", func(s string) bool { return strings.Contains(s, "a thought for later") })
	tm.keys("C-d")
	tm.waitGone()
	entries, _ := os.ReadDir(filepath.Join(home, "sessions"))
	if len(entries) != 1 {
		t.Fatalf("sessions: %v", entries)
	}
	tm.start(home, "--model", "offline", "--resume", entries[0].Name())
	tm.wait("the draft back in the input", func(s string) bool { return strings.Contains(s, "a thought for later") })
	tm.keys("C-c") // clears it
	tm.wait("the draft cleared", func(s string) bool { return !strings.Contains(s, "a thought for later") })
	tm.keys("Up")
	tm.wait("the message sent before the restart", func(s string) bool {
		in := s[strings.LastIndex(s, "Input"):]
		return strings.Contains(in, "what is 2+2?")
	})
	tm.keys("C-d")
	tm.waitGone()
	st, err := os.Stat(filepath.Join(home, "history"))
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the history folder: %v, %v", st, err)
	}
}

// TestAtAttachesInTmux: @ lists the workspace's files, tab puts one in,
// and @notes.md sends the message with the file's text attached (a chip in the chat, the text in the journal for the model);
// @ a path out of the workspace is refused, the message kept.
func TestAtAttachesInTmux(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "notes.md"), []byte("the note says hello-from-notes\n"), 0o600)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("OUTSIDE-SECRET\n"), 0o600)
	tm.start(home, "--model", "offline", "--workspace", ws)
	tm.keys("what does @"+secret+" say", "Enter")
	tm.wait("the refusal, the message kept", func(s string) bool {
		return strings.Contains(s, "not sent: @") && strings.Contains(s, "what does @")
	})
	tm.keys("C-c") // the draft
	tm.keys("summarise @no")
	tm.wait("the list of files", func(s string) bool {
		return strings.Contains(s, "Files (tab puts it in") && strings.Contains(s, "notes.md")
	})
	tm.keys("Tab")
	tm.wait("the path put in", func(s string) bool { return strings.Contains(s, "summarise @notes.md") })
	tm.keys("Enter")
	tm.wait("the chip, and the run's end", func(s string) bool {
		return strings.Contains(chatPane(s), "📎 notes.md") && strings.Contains(s, "· idle ·")
	})
	tm.keys("C-d")
	tm.waitGone()
	journal := strings.Join(journalLines(t, home, onlySession(t, home), ""), "\n")
	if !strings.Contains(journal, "hello-from-notes") || strings.Contains(journal, "OUTSIDE-SECRET") {
		t.Errorf("the journal (the attachment in, the refused file out):\n%s", journal)
	}
}

func onlySession(t *testing.T, home string) string {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(home, "sessions"))
	if len(entries) != 1 {
		t.Fatalf("sessions: %v", entries)
	}
	return entries[0].Name()
}

// TestPickerRestoresTheSession: a session worked on with a model, the
// shell and step mode, opened again from the picker of a console started
// with none of them, comes back with all three.
func TestPickerRestoresTheSession(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	ws := t.TempDir()
	sc := writeScript(t, `{"turns":[{"answer":"hi there"}]}`)
	tm.start(home, "--workspace", ws, "--model", "script:"+sc, "--allow-shell", "--step")
	tm.keys("hello", "Enter")
	tm.waitArmed("the pause before deciding", "Paused before deciding")
	tm.keys("Enter")
	tm.wait("the answer", func(s string) bool { return strings.Contains(chatPane(s), "hi there") && strings.Contains(s, "idle") })
	tm.keys("C-d")
	tm.waitGone()
	tm.start(home, "--workspace", ws)
	tm.keys("C-o")
	tm.wait("the picker", func(s string) bool { return strings.Contains(s, "hello") })
	tm.keys("Enter")
	tm.wait("the session with its model, the shell and step mode", func(s string) bool {
		return strings.Contains(s, "model script:") && strings.Contains(s, "Input (step mode)") && strings.Contains(chatPane(s), "run_shell is offered")
	})
	tm.keys("again", "Enter")
	tm.waitArmed("a pause before deciding: step mode", "Paused before deciding")
	tm.keys("Escape")
	tm.wait("the run aborted", func(s string) bool { return strings.Contains(s, "· idle ·") })
	tm.keys("C-d")
	tm.waitGone()
}

// TestPickerListsThisFolderFirst: the picker shows the sessions of the
// console's folder first, even when another folder's is newer, and says
// where the others were worked on; --continue opens this folder's latest;
// sessions ls lists this folder's alone (--all: every folder's).
func TestPickerListsThisFolderFirst(t *testing.T) {
	home := t.TempDir()
	here, there := t.TempDir(), t.TempDir()
	env := map[string]string{"AGENTTY_HOME": home, "AGENTTY_CONFIG": filepath.Join(home, "no-config.json")}
	for _, run := range [][2]string{{here, "what is 1+1"}, {there, "what is 2+2"}} {
		if code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", run[0], "--model", "offline", run[1]); code != 0 {
			t.Fatalf("run: %s", errs)
		}
	}
	tm := newTmux(t)
	tm.start(home, "--workspace", here, "--model", "offline")
	tm.keys("C-o")
	s := tm.wait("the picker with both", func(s string) bool { return strings.Contains(s, "what is 1+1") && strings.Contains(s, "what is 2+2") })
	if strings.Index(s, "what is 1+1") > strings.Index(s, "what is 2+2") || !strings.Contains(s, "· in "+there) {
		t.Errorf("the picker does not list this folder's session first, or where the other is:\n%s", s)
	}
	tm.keys("Escape")
	tm.keys("C-d")
	tm.waitGone()
	// --continue opens this folder's most recent session, not the newest.
	tm.start(home, "--workspace", here, "--continue")
	tm.wait("this folder's session", func(s string) bool {
		return strings.Contains(chatPane(s), "what is 1+1") && !strings.Contains(chatPane(s), "what is 2+2")
	})
	tm.keys("C-d")
	tm.waitGone()
	code, out, _ := runCLI(t, context.Background(), env, "sessions", "ls", "--workspace", here)
	if code != 0 || !strings.Contains(out, "what is 1+1") || strings.Contains(out, "what is 2+2") || !strings.Contains(out, "(1 in other folders not shown: agentty sessions ls --all)") {
		t.Errorf("sessions ls does not list this folder's alone, saying what it left out:\n%s", out)
	}
	code, out, _ = runCLI(t, context.Background(), env, "sessions", "ls", "--all", "--workspace", here)
	if code != 0 || !strings.Contains(out, "what is 2+2") || strings.Index(out, "what is 1+1") > strings.Index(out, "what is 2+2") {
		t.Errorf("sessions ls --all does not list every folder's, this folder's first:\n%s", out)
	}
}

// TestBangRunsAShellCommand: "!ls" runs in the workspace as the session's
// own run_shell call, approved at the usual pause, and the command and
// its output join the conversation (the journal) with no model asked;
// without --allow-shell it is refused, saying how to have it.
func TestBangRunsAShellCommand(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "notes-for-bang.md"), []byte("x\n"), 0o600)
	tm.start(home, "--workspace", ws, "--model", "offline")
	tm.keys("!ls", "Enter")
	tm.wait("the refusal", func(s string) bool { return strings.Contains(chatPane(s), "only when the shell is allowed") })
	tm.keys("C-d")
	tm.waitGone()
	home = t.TempDir()
	tm.start(home, "--workspace", ws, "--model", "offline", "--allow-shell")
	tm.keys("!ls", "Enter")
	tm.waitArmed("the usual approval", "Approve calling run_shell")
	tm.keys("y")
	tm.wait("the output in the chat", func(s string) bool {
		return strings.Contains(chatPane(s), "run_shell") && strings.Contains(chatPane(s), "$ ls") && strings.Contains(chatPane(s), "notes-for-bang.md") && strings.Contains(s, "· idle ·")
	})
	tm.keys("C-d")
	tm.waitGone()
	journal := strings.Join(journalLines(t, home, onlySession(t, home), ""), "\n")
	if !strings.Contains(journal, `"task":"!ls"`) || !strings.Contains(journal, "notes-for-bang.md") || strings.Contains(journal, `"kind":"usage","time"`) && strings.Contains(journal, `"prompt_tokens":1`) {
		t.Errorf("the journal does not hold the command and its output:\n%s", journal)
	}
}

// TestResumeASessionWhoseModelIsGone: a session of a script model whose
// file is gone (another folder's) opens to read, on the default model,
// saying why.
func TestResumeASessionWhoseModelIsGone(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"AGENTTY_HOME": home, "AGENTTY_CONFIG": filepath.Join(home, "no-config.json")}
	sc := writeScript(t, `{"turns":[{"answer":"scripted hello"}]}`)
	if code, _, errs := runCLI(t, context.Background(), env, "run", "--model", "script:"+sc, "hello"); code != 0 {
		t.Fatalf("run: %s", errs)
	}
	os.Remove(sc)
	tm := newTmux(t)
	tm.start(home, "--resume", onlySession(t, home))
	tm.wait("the session open to read, saying why", func(s string) bool {
		return strings.Contains(chatPane(s), "scripted hello") && strings.Contains(chatPane(s), "cannot be used here")
	})
	tm.keys("C-d")
	tm.waitGone()
}

// TestApprovalsComeBackWithTheSession: a tool allowed for the session at
// an approval (a) during its last run is allowed again when the session is
// resumed, saying so; a new session of the same console asks again.
func TestApprovalsComeBackWithTheSession(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	ws := t.TempDir()
	tm.start(home, "--workspace", ws, "--model", "offline")
	tm.keys("write hello to notes.txt", "Enter")
	tm.waitArmed("the approval", "Approve calling write_file")
	tm.keys("a")
	tm.wait("the run's end", func(s string) bool { return strings.Contains(s, "· idle ·") })
	tm.keys("C-d")
	tm.waitGone()
	id := onlySession(t, home)
	tm.start(home, "--workspace", ws, "--model", "offline", "--resume", id)
	tm.wait("the approval restored", func(s string) bool {
		return strings.Contains(chatPane(s), "Allowed for this session, as when it was last worked on: write_file")
	})
	tm.keys("write bye to notes.txt", "Enter")
	tm.wait("the file written with no approval, and the run's end", func(s string) bool {
		// The answer in the chat, not only the file: the screen may show
		// "idle" from before the run began.
		return strings.Contains(chatPane(s), "replaced notes.txt") && strings.Contains(s, "· idle ·") && !strings.Contains(s, "Approve calling")
	})
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); !strings.Contains(string(b), "bye") {
		t.Fatalf("notes.txt: %q", b)
	}
	tm.keys("/clear", "Enter")
	tm.keys("write again to notes.txt", "Enter")
	tm.waitArmed("a new session asks", "Approve calling write_file")
	tm.keys("n")
	tm.wait("idle", func(s string) bool { return strings.Contains(s, "· idle ·") })
	tm.keys("C-d")
	tm.waitGone()
}

// TestBurstsStayText: words typed in one burst (as SSH, mosh or dictation
// deliver them) are text, even when they spell a key: "press enter" sends
// nothing, "use tab" moves no focus, "go up now" recalls no history, "esc
// key" leaves nothing; all of it is the message enter then sends.
func TestBurstsStayText(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	tm.start(home, "--model", "offline")
	tm.wait("the console", func(s string) bool { return strings.Contains(s, "· idle ·") })
	for _, burst := range []string{"press enter ", "use tab ", "go up now ", "esc key"} {
		tm.run("send-keys", "-t", tm.name, "-l", burst)
	}
	tm.wait("the bursts in the draft", func(s string) bool {
		return strings.Contains(s, "press enter use tab go up now esc key")
	})
	above := func(s string) string { top, _, _ := strings.Cut(s, "─ Input"); return chatPane(top) }
	if strings.Contains(above(tm.screen()), "press") {
		t.Fatalf("a burst was sent:\n%s", tm.screen())
	}
	tm.keys("Enter")
	tm.wait("the whole text sent as one message", func(s string) bool {
		return strings.Contains(above(s), "press enter use tab go up now esc key") && strings.Contains(s, "· idle ·")
	})
	tm.keys("/exit", "Enter") // quits, as ctrl+d does
	tm.waitGone()
}

// TestFailedCommandShowsFailed: a command that exits non-zero is shown ✗
// with its exit status in the Chat and on the Timeline, not ✓ and ok.
func TestFailedCommandShowsFailed(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	tm.start(home, "--workspace", t.TempDir(), "--model", "offline", "--allow-shell")
	tm.keys("!ls nonexistent-dir", "Enter")
	tm.waitArmed("the approval", "Approve calling run_shell")
	tm.keys("y")
	tm.wait("the failure shown", func(s string) bool {
		return strings.Contains(chatPane(s), "✗ exit 2") && strings.Contains(timelinePane(s), "exit 2") && strings.Contains(s, "· idle ·")
	})
	tm.keys("C-d")
	tm.waitGone()
}
