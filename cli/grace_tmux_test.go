package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTypingAcrossAnApproval types a message one key at a time while an
// answer is awaited; the approval of a command comes mid-word, and the
// typing goes on past it. The keys typed as it is drawn and after, y, n,
// s, e and enter among them, go on into the draft: nothing runs until a
// deliberate key once the bar says its keys are armed, and the draft is
// back whole after (issue 50, 3).
func TestTypingAcrossAnApproval(t *testing.T) {
	ws := t.TempDir()
	sc := writeScript(t, `{"turns":[
		{"tool_calls":[{"name":"run_shell","arguments":{"command":"touch ran.txt"}}],"delay_ms":700},
		{"answer":"left it"}]}`)
	tm := newTmux(t)
	tm.start(t.TempDir(), "--workspace", ws, "--model", "script:"+sc, "--allow-shell")
	tm.keys("tidy up", "Enter")
	// A key every 30 ms or so, on through the approval's arrival and for
	// a second after it: the letters of "yes", "a", "e", "n", "s" and the
	// spaces and enter would each answer it or open something.
	typed, arrived := "", -1
	for i, r := range "the next thing is the release notes, and then a new tag: yes" {
		tm.run("send-keys", "-t", tm.name, "-l", string(r))
		typed += string(r)
		if arrived < 0 && strings.Contains(tm.screen(), "Approve calling run_shell") {
			arrived = i
		}
		time.Sleep(30 * time.Millisecond)
	}
	tm.keys("Enter")
	if arrived < 0 || arrived > len(typed)-15 {
		t.Fatalf("the approval did not come while typing (at %d of %q):\n%s", arrived, typed, tm.screen())
	}
	s := tm.waitArmed("the approval", "Approve calling run_shell")
	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); err == nil {
		t.Fatalf("a key typed as the approval came ran the command:\n%s", s)
	}
	if strings.Contains(s, "Edit the arguments") || strings.Contains(s, "Allowed for this session") {
		t.Fatalf("a key typed as the approval came opened or allowed something:\n%s", s)
	}
	tm.keys("n") // deliberate: deny
	s = tm.wait("the run to end and the draft back", func(s string) bool {
		return strings.Contains(chatPane(s), "left it") && strings.Contains(s, "· idle ·")
	})
	if _, err := os.Stat(filepath.Join(ws, "ran.txt")); err == nil {
		t.Fatal("the command ran though it was denied")
	}
	input := s[strings.Index(s, "─ Input"):]
	if !strings.Contains(input, typed) {
		t.Errorf("the draft does not hold %q:\n%s", typed, input)
	}
	tm.keys("C-d")
	tm.waitGone()
}
