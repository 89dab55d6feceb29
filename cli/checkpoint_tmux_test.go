package cli

import (
	"os"
	"path/filepath"
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
