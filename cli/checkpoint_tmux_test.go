package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRewindInTheConsole: in a git workspace the offline model writes a
// file; the Timeline says the step changed one file; /diff shows it;
// /rewind 1 shows what it undoes and asks, and f rewinds the files only:
// the file is gone, the conversation stays.
func TestRewindInTheConsole(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	ws, person := gitWorkspace(t)
	before := person()
	tm.start(home, "--workspace", ws, "--model", "offline")
	tm.keys("write hello to notes.txt", "Enter")
	tm.waitArmed("the approval", "Approve calling write_file")
	tm.keys("y")
	tm.wait("the run's end, the step's files said", func(s string) bool {
		return strings.Contains(s, "· idle ·") && strings.Contains(timelinePane(s), "±1 file")
	})
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); !strings.Contains(string(b), "hello") {
		t.Fatalf("notes.txt: %q", b)
	}
	tm.keys("/diff", "Enter")
	tm.wait("the diff", func(s string) bool { return strings.Contains(s, "+++ b/notes.txt") && strings.Contains(s, "+hello") })
	tm.keys("Escape")
	// An Escape and the next key in one read are alt+that key: wait.
	tm.wait("the diff closed", func(s string) bool { return !strings.Contains(s, "+++ b/notes.txt") })
	tm.keys("/rewind 1", "Enter")
	tm.wait("the plan, with what it undoes", func(s string) bool {
		return strings.Contains(s, "f: files only") && strings.Contains(s, "remove notes.txt") && strings.Contains(s, "-hello")
	})
	tm.keys("f")
	tm.wait("the rewind said", func(s string) bool { return strings.Contains(chatPane(s), "Rewound the files to before step 1") })
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); err == nil {
		t.Error("notes.txt is still there after the rewind")
	}
	s := tm.wait("the conversation kept", func(s string) bool { return strings.Contains(chatPane(s), "write hello to notes.txt") })
	if strings.Contains(s, "A fork of") {
		t.Errorf("files only forked the conversation:\n%s", s)
	}
	tm.keys("C-d")
	tm.waitGone()
	if got := person(); got != before {
		t.Errorf("the person's repository changed:\n%s\n---\n%s", before, got)
	}
}

// flatChat is the Chat pane's words, its lines joined (a note wraps).
func flatChat(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(chatPane(s), "│", " ")), " ")
}

// consoleSession is the id of the newest session of ws in home.
func consoleSession(t *testing.T, env map[string]string, ws string) string {
	t.Helper()
	_, ls, _ := runCLI(t, context.Background(), env, "sessions", "ls", "--workspace", ws, "--json")
	m := regexp.MustCompile(`"id":\s*"([^"]+)"`).FindStringSubmatch(ls)
	if m == nil {
		t.Fatalf("no session of %s: %s", ws, ls)
	}
	return m[1]
}

// TestRewindUndoInTheConsole: /rewind undo with nothing to undo says so,
// and the console goes on; a step writes notes.txt, /rewind 1 and f remove
// it and the chat names /rewind undo; the CLI's --undo, while the console
// holds the session, says to do it there and changes nothing; /rewind undo
// brings the file back and the chat says so.
func TestRewindUndoInTheConsole(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	env := map[string]string{"AGENTTY_HOME": home, "AGENTTY_CONFIG": home + "/no-config.json", "HOME": t.TempDir()}
	ws, _ := gitWorkspace(t)
	notes := filepath.Join(ws, "notes.txt")
	tm.start(home, "--workspace", ws, "--model", "offline")
	tm.keys("/rewind undo", "Enter")
	tm.wait("the failed undo said", func(s string) bool {
		return strings.Contains(flatChat(s), "/rewind:") && strings.Contains(s, "· idle ·")
	})
	tm.keys("write hello to notes.txt", "Enter")
	tm.waitArmed("the approval", "Approve calling write_file")
	tm.keys("y")
	tm.wait("the run's end", func(s string) bool {
		return strings.Contains(s, "· idle ·") && strings.Contains(timelinePane(s), "±1 file")
	})
	tm.keys("/rewind 1", "Enter")
	tm.wait("the plan", func(s string) bool {
		return strings.Contains(s, "f: files only") && strings.Contains(s, "remove notes.txt")
	})
	tm.keys("f")
	tm.wait("the rewind said, with its undo", func(s string) bool {
		c := flatChat(s)
		return strings.Contains(c, "Rewound the files to before step 1") && strings.Contains(c, "/rewind undo takes it back")
	})
	if _, err := os.Stat(notes); err == nil {
		t.Fatal("notes.txt is still there after the rewind")
	}
	id := consoleSession(t, env, ws)
	code, out, errs := runCLI(t, context.Background(), env, "sessions", "rewind", id, "--undo")
	if code == 0 || !strings.Contains(errs, "/rewind undo") {
		t.Errorf("the CLI's --undo while the console holds the session: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(notes); err == nil {
		t.Fatal("the CLI's refused undo brought notes.txt back behind the console")
	}
	tm.keys("/rewind undo", "Enter")
	tm.wait("the undo said", func(s string) bool { return strings.Contains(flatChat(s), "Took the last rewind back: 1 written") })
	if b, _ := os.ReadFile(notes); !strings.Contains(string(b), "hello") {
		t.Errorf("after /rewind undo, notes.txt: %q", b)
	}
	tm.keys("C-d")
	tm.waitGone()
}

// TestRewindAsksForOtherSessionsFiles: while a console's session has
// written notes.txt, another session (agentty run, same folder) writes
// theirs.txt. /rewind 1 in the console names it as the other session's;
// f asks again, naming it, and changes nothing; y rewinds both; /rewind
// undo brings both back.
func TestRewindAsksForOtherSessionsFiles(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	env := map[string]string{"AGENTTY_HOME": home, "AGENTTY_CONFIG": home + "/no-config.json", "HOME": t.TempDir()}
	ws, _ := gitWorkspace(t)
	theirs := filepath.Join(ws, "theirs.txt")
	tm.start(home, "--workspace", ws, "--model", "offline")
	tm.keys("write hello to notes.txt", "Enter")
	tm.waitArmed("the approval", "Approve calling write_file")
	tm.keys("y")
	tm.wait("the run's end", func(s string) bool {
		return strings.Contains(s, "· idle ·") && strings.Contains(timelinePane(s), "±1 file")
	})
	mine := consoleSession(t, env, ws)
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"theirs.txt","content":"theirs\n"}}]},{"answer":"done"}]}`)
	if code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "--yes", "write theirs.txt"); code != 0 {
		t.Fatalf("the other session: exit %d: %s", code, errs)
	}
	other := consoleSession(t, env, ws)
	if other == mine {
		t.Fatal("the run went into the console's session")
	}
	tm.keys("/rewind 1", "Enter")
	tm.wait("the plan, naming the other session's file", func(s string) bool {
		return strings.Contains(s, "Other sessions' work since") && strings.Contains(s, "theirs.txt (session "+other+", step 1)")
	})
	tm.keys("f")
	tm.wait("the second question", func(s string) bool {
		return strings.Contains(s, "y: rewind them too") && strings.Contains(s, "theirs.txt (session "+other)
	})
	if _, err := os.Stat(theirs); err != nil {
		t.Fatalf("f alone took the other session's file: %v", err)
	}
	tm.keys("y")
	tm.wait("the rewind said", func(s string) bool {
		return strings.Contains(flatChat(s), "Rewound the files to before step 1: 0 written, 2 removed")
	})
	if _, err := os.Stat(theirs); err == nil {
		t.Error("y left theirs.txt")
	}
	tm.keys("/rewind undo", "Enter")
	tm.wait("the undo said", func(s string) bool { return strings.Contains(flatChat(s), "Took the last rewind back: 2 written") })
	if b, _ := os.ReadFile(theirs); string(b) != "theirs\n" {
		t.Errorf("after /rewind undo, theirs.txt: %q", b)
	}
	tm.keys("C-d")
	tm.waitGone()
}
