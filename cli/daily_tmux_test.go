package cli

import (
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
