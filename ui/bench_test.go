package ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

const mdMessage = "Here is what I found:\n\n- the **first** point, with `code`\n- the second point\n\n```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```\n\nAnd a closing paragraph that runs on for a while so that it wraps across a couple of lines in the pane."

// longConsole returns a console at 160×45 holding n messages of mixed
// Markdown and tool calls.
func longConsole(b *testing.B, n int) *Model {
	m := New(Config{Model: "bench", Style: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 45})
	now := time.Now()
	ev := func(k engine.Kind, d any) engine.Event {
		return engine.Event{Kind: k, Time: now, Data: d, Step: 1}
	}
	for i := 0; i < n; i += 4 {
		m.applyEvent(ev(engine.KindRunStarted, &engine.RunStarted{Task: fmt.Sprintf("question %d: what is **%d**?", i, i)}))
		call := engine.ToolCall{ID: fmt.Sprint("c", i), Name: "calculator", Args: json.RawMessage(`{"expression":"6*7"}`)}
		m.applyEvent(ev(engine.KindDecision, &engine.Decided{ToolCalls: []engine.ToolCall{call}}))
		m.applyEvent(ev(engine.KindToolFinished, &engine.ToolFinished{ID: call.ID, Name: call.Name, Status: "ok", Result: "6*7 = 42"}))
		m.applyEvent(ev(engine.KindDecision, &engine.Decided{Text: mdMessage}))
		m.applyEvent(ev(engine.KindRunFinished, &engine.RunFinished{StopReason: engine.StopAnswered}))
	}
	m.applyEvent(ev(engine.KindRunStarted, &engine.RunStarted{Task: "and now a long answer"}))
	m.View()
	return m
}

// BenchmarkViewLongChat is one frame of a console holding 1,000 messages
// while an answer streams in: one text_delta through Update, then View.
func BenchmarkViewLongChat(b *testing.B) {
	m := longConsole(b, 1000)
	delta := engineEventMsg{engine.Event{Kind: engine.KindTextDelta, Data: &engine.TextDelta{Text: "token "}}}
	b.ReportAllocs()
	for b.Loop() {
		m.Update(delta)
		_ = m.View()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/frame")
}

// BenchmarkStreamTokens pushes 10,000 text_delta events through Update and
// View and reports tokens per second.
func BenchmarkStreamTokens(b *testing.B) {
	const tokens = 10000
	b.ReportAllocs()
	for b.Loop() {
		m := longConsole(b, 40)
		for i := range tokens {
			text := "word "
			if i%40 == 39 {
				text = "word\n"
			}
			m.Update(engineEventMsg{engine.Event{Kind: engine.KindTextDelta, Data: &engine.TextDelta{Text: text}}})
			_ = m.View()
		}
		if !strings.Contains(m.View(), "word") {
			b.Fatal("the streamed text is not on screen")
		}
	}
	b.ReportMetric(float64(b.N*tokens)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkSanitize makes foreign text safe to draw: clean text (the fast
// path, which allocates nothing), Go code with tabs, and a file full of
// escape sequences.
func BenchmarkSanitize(b *testing.B) {
	clean := strings.Repeat("The quick brown fox jumps over the lazy dog. 日本語 😀\n", 100)
	code := strings.Repeat("func main() {\n\tfor i := range 3 {\n\t\tfmt.Println(i)\t// count\n\t}\n}\n", 60)
	escapes := strings.Repeat("title \x1b]0;x\x07 clear \x1b[2J\r\n\x1b[31mred\x1b[0m \u009b1m\n", 100)
	for _, c := range []struct{ name, text string }{{"clean", clean}, {"tabs", code}, {"escapes", escapes}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			for b.Loop() {
				_ = Sanitize(c.text)
			}
		})
	}
}
