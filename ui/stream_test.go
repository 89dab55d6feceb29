package ui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentty/agentty/engine"
)

// tokens cuts text as a model streams it: a word and the space or line
// break after it.
func tokens(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexAny(text, " \n")
		if i < 0 {
			i = len(text) - 1
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// TestStreamedBlocksDoNotMove: while an answer streams, its complete
// blocks are drawn rendered (the list's bullets, the table's rules, the
// code block's margin), the open one raw; and the lines of the complete
// blocks are the finished answer's lines, so nothing that was drawn moves
// when the answer ends.
func TestStreamedBlocksDoNotMove(t *testing.T) {
	for _, style := range []string{"notty", "dark"} {
		for _, size := range [][2]int{{80, 24}, {160, 48}} {
			t.Run(fmt.Sprintf("%s-%dx%d", style, size[0], size[1]), func(t *testing.T) {
				m := New(Config{Style: style, Backend: &memBackend{s: engine.NewSession("s")}})
				m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
				m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "review the branch"}))
				var frames [][]string
				var sofar strings.Builder
				var texts []string
				for _, tok := range tokens(longAnswer) {
					m.Update(ev(engine.KindTextDelta, &engine.TextDelta{Text: tok}))
					sofar.WriteString(tok)
					it := m.chat.items[len(m.chat.items)-1]
					frames = append(frames, append([]string(nil), m.chat.linesOf(it)...))
					texts = append(texts, sofar.String())
				}
				m.Update(ev(engine.KindDecision, &engine.Decided{Text: longAnswer}))
				final := append([]string(nil), m.chat.linesOf(m.chat.items[len(m.chat.items)-1])...)
				m.chat.invalidate() // drawn again from its text alone, the answer is the same
				if again := m.chat.linesOf(m.chat.items[len(m.chat.items)-1]); strings.Join(again, "\n") != strings.Join(final, "\n") {
					t.Fatalf("the finished answer drawn from what streamed\n%s\nis not the answer drawn from its text\n%s",
						ansi.Strip(strings.Join(final, "\n")), ansi.Strip(strings.Join(again, "\n")))
				}
				rendered := 0 // frames that drew complete blocks rendered
				for k, f := range frames {
					text := texts[k][:strings.LastIndexByte(texts[k], "\n"[0])+1]
					blocks := splitBlocks(text)
					done := strings.Join(blocks[:len(blocks)-1], "")
					n := len(m.chat.markdown(done, m.chat.textWidth())) // the complete blocks' lines
					if n == 0 {
						continue
					}
					rendered++
					for i := 1; i <= n; i++ {
						if i >= len(f) || f[i] != final[i] {
							t.Fatalf("after %q, line %d of the complete blocks\n%q\nis not the finished answer's\n%q",
								texts[k], i, ansi.Strip(f[min(i, len(f)-1)]), ansi.Strip(final[i]))
						}
					}
				}
				if rendered < len(frames)/2 {
					t.Errorf("only %d of %d frames drew complete blocks", rendered, len(frames))
				}
			})
		}
	}
}

// TestStreamRendersTheOpenBlockRaw: the block that is still streaming is
// shown as written (a list's dashes), the complete ones rendered (a list's
// bullets).
func TestStreamRendersTheOpenBlockRaw(t *testing.T) {
	const answer = "- a list that is done\n\nThen a paragraph.\n\n- one item\n- another item being"
	m := New(Config{Style: "notty", Backend: &memBackend{s: engine.NewSession("s")}})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "hi"}))
	for _, tok := range tokens(answer) {
		m.Update(ev(engine.KindTextDelta, &engine.TextDelta{Text: tok}))
	}
	v := ansi.Strip(strings.Join(m.chat.view(false), "\n"))
	if !strings.Contains(v, "• a list that is done") || !strings.Contains(v, "- one item") || strings.Contains(v, "• one item") {
		t.Errorf("the complete list is not rendered, or the open list is not raw:\n%s", v)
	}
	m.Update(ev(engine.KindDecision, &engine.Decided{Text: answer}))
	if v := ansi.Strip(strings.Join(m.chat.view(false), "\n")); !strings.Contains(v, "• one item") {
		t.Errorf("the finished list is not rendered:\n%s", v)
	}
}

// TestResizeWhileStreaming: a resize draws the streamed answer again at
// the new width, its complete blocks rendered at it.
func TestResizeWhileStreaming(t *testing.T) {
	m := New(Config{Style: "notty", Backend: &memBackend{s: engine.NewSession("s")}})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "hi"}))
	half := longAnswer[:strings.Index(longAnswer, "The fix")]
	for _, tok := range tokens(half) {
		m.Update(ev(engine.KindTextDelta, &engine.TextDelta{Text: tok}))
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	it := m.chat.items[len(m.chat.items)-1]
	got := m.chat.linesOf(it)
	want := m.chat.markdown(strings.Join(splitBlocks(half)[:len(splitBlocks(half))-1], ""), m.chat.textWidth())
	for i, l := range want {
		if got[i+1] != fit(l, m.chat.width) {
			t.Fatalf("line %d after the resize: %q, want %q", i+1, got[i+1], fit(l, m.chat.width))
		}
	}
}
