package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// zoomTable is a table of about 100 columns, and its cells.
var (
	zoomTable = "Here is what I found:\n\n" +
		"| check | file | severity | finding | suggested fix |\n" +
		"|---|---|---|---|---|\n" +
		"| C1 | engine/loop.go | high | the step limit is not checked before a retried decision | check it before every decision |\n" +
		"| C2 | ui/markdown.go | medium | tables wider than the pane lose the end of their cells | wrap the cells inside their columns |\n" +
		"| C3 | tools/shell.go | low | a failed command shows a green mark in the chat | show the exit status in red |\n\n" +
		"That is all."
	zoomCells = []string{"check", "file", "severity", "finding", "suggested fix",
		"C1", "engine/loop.go", "high", "the step limit is not checked before a retried decision", "check it before every decision",
		"C2", "ui/markdown.go", "medium", "tables wider than the pane lose the end of their cells", "wrap the cells inside their columns",
		"C3", "tools/shell.go", "low", "a failed command shows a green mark in the chat", "show the exit status in red"}
)

// TestZoomShowsAWideTableInTmux: at 160 columns the Chat is 76 wide and a
// 100-column table is drawn with its cells wrapped, no word lost; ctrl+z
// gives the Chat the whole width and the table is shown whole, a row a
// line, the status line saying so; /zoom puts the panes side by side again.
func TestZoomShowsAWideTableInTmux(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	answer, _ := json.Marshal(zoomTable)
	sc := writeScript(t, `{"turns":[{"answer":`+string(answer)+`}]}`)
	tm.startSized(home, 160, 48, "--model", "script:"+sc)
	tm.keys("show the findings", "Enter")
	s := tm.wait("the answer, side by side", func(s string) bool {
		return strings.Contains(chatPane(s), "That is all.") && strings.Contains(s, "· idle ·")
	})
	chat := chatPane(s[:strings.Index(s, "┌─ Input")])
	for _, cell := range zoomCells {
		for _, word := range strings.Fields(cell) {
			if !strings.Contains(chat, word) {
				t.Fatalf("side by side, the Chat lost %q of %q:\n%s", word, cell, s)
			}
		}
	}
	if strings.Contains(chat, "…") || !strings.Contains(timelinePane(s), "show the findings") {
		t.Fatalf("side by side, a cell was cut or the Timeline is not beside the Chat:\n%s", s)
	}
	tm.keys("C-z")
	s = tm.wait("the Chat zoomed, the table whole", func(s string) bool {
		for _, cell := range zoomCells {
			if !strings.Contains(s, cell) {
				return false
			}
		}
		return strings.Contains(s, "zoom Chat") && !strings.Contains(s, "┌─ Timeline ─")
	})
	tm.run("send-keys", "-t", tm.name, "-l", "/zoom")
	tm.keys("Enter")
	tm.wait("the panes side by side again", func(s string) bool {
		return strings.Contains(s, "┌─ Timeline ─") && !strings.Contains(s, "zoom Chat") && strings.Contains(chatPane(s), "That is all.")
	})
	tm.keys("C-d")
	tm.waitGone()
}
