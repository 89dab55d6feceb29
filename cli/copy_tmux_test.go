package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// copyKey stands for the person's API key: the script's answer says it,
// and what is copied out shows it redacted, as the journal does.
const copyKey = "sk-copy-0123456789abcdef"

// startCopy runs the console in a w×h window of tm's own server, with
// copyKey as the API key, then follow (a shell command, "" for none) once
// it quits, and turns tmux's set-clipboard on, so that an OSC 52 the
// console writes lands in tmux's paste buffer.
func startCopy(tm *tmux, home string, w, h int, follow string, args ...string) {
	tm.t.Helper()
	cmd := "AGENTTY_HOME=" + home + " AGENTTY_CONFIG=" + home + "/no-config.json OPENAI_API_KEY=" + copyKey + " TERM=xterm-256color " + binary + " " + strings.Join(args, " ")
	if follow != "" {
		cmd += "; " + follow
	}
	tm.run("new-session", "-d", "-s", tm.name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), cmd)
	tm.run("set-option", "-s", "set-clipboard", "on")
	tm.wait("the console", func(s string) bool { return strings.Contains(s, "Input") })
}

// answerScript is a script whose one turn answers text.
func answerScript(t *testing.T, text string) string {
	t.Helper()
	js, err := json.Marshal(map[string]any{"turns": []any{map[string]string{"answer": text}}})
	if err != nil {
		t.Fatal(err)
	}
	return writeScript(t, string(js))
}

// TestCopyInTmux: /copy puts the last answer on tmux's clipboard buffer
// (OSC 52, set-clipboard on) as written, the key redacted as the chat
// shows it; /copy code its code block, with its tab; ctrl+g gives the
// mouse to the terminal and takes it back.
func TestCopyInTmux(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	answer := "Your key " + copyKey + " works.\n\n```sh\nprintf 'a\\tb'\tdone\n```"
	startCopy(tm, home, 160, 45, "", "--model", "script:"+answerScript(t, answer))
	// The console's output goes through a writer of its own (OSC 52 between
	// frames): Bubble Tea must still see the terminal, and its size.
	tm.wait("the console at the window's width", func(s string) bool { return strings.Contains(memoryPane(s), "Memory") })
	tm.keys("check my setup", "Enter")
	tm.wait("the answer", func(s string) bool {
		return strings.Contains(chatPane(s), "works.") && strings.Contains(s, "· idle ·")
	})
	tm.run("send-keys", "-t", tm.name, "-l", "/copy")
	tm.keys("Enter")
	tm.wait("the note", func(s string) bool { return strings.Contains(chatPane(s), "Copied the agent's last answer") })
	want := strings.ReplaceAll(answer, copyKey, "[redacted OPENAI_API_KEY]")
	if got := tm.waitBuffer(want); got != want {
		t.Errorf("tmux's buffer after /copy:\n%q\nwant:\n%q", got, want)
	}
	tm.run("send-keys", "-t", tm.name, "-l", "/copy code")
	tm.keys("Enter")
	if got := tm.waitBuffer("printf 'a\\tb'\tdone"); got != "printf 'a\\tb'\tdone" {
		t.Errorf("tmux's buffer after /copy code: %q", got)
	}

	mouse := func() string {
		return strings.TrimSpace(tm.run("display-message", "-p", "-t", tm.name, "#{mouse_button_flag}"))
	}
	if mouse() != "1" {
		t.Fatalf("the console does not take the mouse: mouse_button_flag %q", mouse())
	}
	tm.keys("C-g")
	tm.wait("the mouse released", func(s string) bool { return strings.Contains(s, "mouse released (ctrl+g)") })
	tm.waitFor("the terminal's mouse", func() bool { return mouse() == "0" })
	tm.keys("C-g")
	tm.wait("the mouse taken back", func(s string) bool { return !strings.Contains(s, "mouse released (ctrl+g)") })
	tm.waitFor("the console's mouse", func() bool { return mouse() == "1" })
	tm.keys("C-d")
	tm.waitGone()
}

// waitBuffer waits for tmux's paste buffer to hold want, and returns what
// it holds at last.
func (tm *tmux) waitBuffer(want string) string {
	tm.t.Helper()
	got := ""
	tm.waitFor("the paste buffer", func() bool {
		got = tm.run("show-buffer")
		return got == want
	})
	return got
}

// waitFor polls cond for up to a minute (a hang, not a speed limit).
func (tm *tmux) waitFor(what string, cond func() bool) {
	tm.t.Helper()
	tm.wait(what, func(string) bool { return cond() })
}

// TestLastAnswerStaysInTheScrollback: on quit, the console leaves the
// alternate screen and prints its last answer on the terminal, so that it
// stays in the scrollback: plain text wrapped to the terminal (a code line
// whole), the key redacted, and the model's escape sequences shown, not
// obeyed (the window's title is not changed).
func TestLastAnswerStaysInTheScrollback(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	code := "go test -run TestLastAnswerStaysInTheScrollback -count=1 ./cli/ && echo all-green-and-well"
	answer := "Done: the tests pass and the key " + copyKey + " stayed out of the logs; the next step is to run them " +
		"once more on the other machine.\x1b]2;pwned\a\n\n```\n" + code + "\n```"
	startCopy(tm, home, 80, 24, "echo agentty-exited; sleep 600", "--model", "script:"+answerScript(t, answer))
	tm.keys("run the tests", "Enter")
	tm.wait("the answer", func(s string) bool {
		return strings.Contains(s, "pass and the key") && strings.Contains(s, "· idle ·")
	})
	tm.keys("C-d")
	tm.wait("the console gone", func(s string) bool { return strings.Contains(s, "agentty-exited") })
	pane := tm.run("capture-pane", "-t", tm.name, "-p", "-J", "-S", "-")
	if strings.TrimSpace(tm.run("display-message", "-p", "-t", tm.name, "#{alternate_on}")) != "0" {
		t.Fatal("the console left the terminal on the alternate screen")
	}
	start := strings.Index(pane, "agentty's last answer:")
	if start < 0 {
		t.Fatalf("no last answer left on the terminal:\n%s", pane)
	}
	left := pane[start:]
	for _, want := range []string{
		"Done: the tests pass and the key [redacted OPENAI_API_KEY] stayed out of the",
		"logs; the next step is to run them once more on the other machine.␛]2;pwned^G",
		"\n" + code + "\n",
	} {
		if !strings.Contains(left, want) {
			t.Errorf("the answer left on the terminal lacks %q:\n%s", want, left)
		}
	}
	if strings.Contains(pane, copyKey) {
		t.Errorf("the key is on the terminal:\n%s", pane)
	}
	if title := tm.run("display-message", "-p", "-t", tm.name, "#{pane_title}"); strings.Contains(title, "pwned") {
		t.Errorf("the model's escape set the title: %q", title)
	}
}
