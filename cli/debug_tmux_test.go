package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// --break tool=calculator stops the run before the calculator and nowhere
// else; m answers for the tool there, and the model sees that answer; the
// next run, with no calculator, does not stop.
func TestConsoleBreakpointAndAnswerForTheTool(t *testing.T) {
	tm := newTmux(t)
	tm.start(t.TempDir(), "--model", "offline", "--break", "tool=calculator")
	tm.keys("what is 17*23?", "Enter")
	tm.wait("the breakpoint", func(s string) bool {
		return strings.Contains(s, "Break tool=calculator: before calling calculator") && strings.Contains(s, "m: answer for the tool")
	})
	tm.keys("m")
	tm.wait("the answer form", func(s string) bool { return strings.Contains(s, "Answer for the tool calculator") })
	tm.keys("17*23 = 400", "C-s")
	s := tm.wait("the answer", func(s string) bool {
		return strings.Contains(chatPane(s), "17*23 = 400") && strings.Contains(s, "idle")
	})
	if strings.Contains(s, "391") {
		t.Errorf("the calculator ran:\n%s", s)
	}
	tm.keys("remember that my name is Ada", "Enter")
	s = tm.wait("the second run", func(s string) bool { return strings.Contains(s, "step 4 · idle") })
	if strings.Contains(s, "Paused") || strings.Contains(s, "Break") {
		t.Errorf("a run with no calculator call paused:\n%s", s)
	}
	tm.keys("/break", "Enter")
	tm.wait("/break listing it", func(s string) bool { return strings.Contains(s, "Breakpoints: tool=calculator") })
	tm.keys("C-d")
	tm.waitGone()
}

// a at an approval allows the tool for the rest of the session: the next
// call of it does not ask; the approval showed the file's diff; and
// /permissions lists what was allowed.
func TestConsoleAllowForTheSession(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("old line\n"), 0o644)
	sc := writeScript(t, `{"turns":[
		{"tool_calls":[{"name":"write_file","arguments":{"path":"a.txt","content":"new line\n"}}]},
		{"tool_calls":[{"name":"write_file","arguments":{"path":"b.txt","content":"two\n"}}]},
		{"answer":"wrote both"}]}`)
	tm := newTmux(t)
	tm.start(t.TempDir(), "--model", "script:"+sc, "--workspace", ws)
	tm.keys("write them", "Enter")
	s := tm.wait("the approval", func(s string) bool {
		return strings.Contains(s, "Approve calling write_file") && strings.Contains(s, "a: allow for this session")
	})
	for _, want := range []string{"--- a/a.txt", "+++ b/a.txt", "-old line", "+new line"} {
		if !strings.Contains(s, want) {
			t.Errorf("the approval does not show %q:\n%s", want, s)
		}
	}
	tm.keys("a")
	s = tm.wait("the answer", func(s string) bool { return strings.Contains(chatPane(s), "wrote both") && strings.Contains(s, "idle") })
	if b, err := os.ReadFile(filepath.Join(ws, "b.txt")); err != nil || string(b) != "two\n" {
		t.Errorf("the second write, allowed for the session: %q %v", b, err)
	}
	tm.keys("/permissions", "Enter")
	tm.wait("/permissions", func(s string) bool { return strings.Contains(s, "Allowed for this session: 1. write_file") })
	tm.keys("/permissions revoke 1", "Enter")
	tm.wait("the revoke", func(s string) bool { return strings.Contains(s, "Revoked: write_file asks again") })
	tm.keys("C-d")
	tm.waitGone()
}

// Emoji that terminals draw at different widths (a skin tone, a joined
// family, a heart with its selector) leave every line of the frame as wide
// as the terminal in tmux, and the status line once.
func TestConsoleEmojiWidths(t *testing.T) {
	sc := writeScript(t, `{"turns":[{"answer":"👍🏽 looks good 👨‍👩‍👧 ❤️ done"}]}`)
	tm := newTmux(t)
	tm.start(t.TempDir(), "--model", "script:"+sc)
	tm.keys("how is it?", "Enter")
	s := tm.wait("the answer", func(s string) bool { return strings.Contains(s, "looks good") && strings.Contains(s, "idle") })
	if n := strings.Count(s, "agentty · step"); n != 1 {
		t.Errorf("the status line is drawn %d times:\n%s", n, s)
	}
	for i, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if strings.Contains(l, "looks good") && (ansi.StringWidth(l) != 160 || !strings.HasSuffix(l, "│")) {
			t.Errorf("line %d is %d cells, not 160, or its border moved: %q", i+1, ansi.StringWidth(l), l)
		}
	}
	tm.keys("C-d")
	tm.waitGone()
}
