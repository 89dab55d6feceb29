package ui

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"syscall"
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

// resumeEvents is a journal of about 10,000 events: runs of steps that call
// a tool and then answer in Markdown, as a long working session has.
func resumeEvents() []engine.Event { return resumeEventsN(10000) }

// resumeEventsN is a session of about n events: runs of 14 steps, each a
// decision calling the calculator, answered in Markdown.
func resumeEventsN(n int) []engine.Event {
	var evs []engine.Event
	now := time.Now()
	step := 0
	for run := 0; len(evs) < n; run++ {
		id := fmt.Sprint("run-", run)
		add := func(p engine.Phase, k engine.Kind, d any) {
			evs = append(evs, engine.Event{V: engine.SchemaVersion, Session: "s", Run: id, Step: step, Phase: p, Kind: k, Time: now, Data: d})
		}
		add("", engine.KindRunStarted, &engine.RunStarted{Task: fmt.Sprintf("task %d: what is %d*7?", run, run), Model: "bench"})
		for turn := range 14 {
			step++
			add(engine.Perceive, engine.KindStepStarted, &engine.StepStarted{Turn: turn})
			add(engine.Perceive, engine.KindModelRequest, &engine.ModelRequest{Messages: 2 * turn, Tokens: 900, Budget: 64000})
			if turn == 13 {
				add(engine.Decide, engine.KindDecision, &engine.Decided{Text: mdMessage, Attempts: 1})
				add(engine.Decide, engine.KindUsage, &engine.UsageRecorded{Usage: engine.Usage{PromptTokens: 900, CompletionTokens: 80}})
				add(engine.Observe, engine.KindStepFinished, &engine.StepFinished{})
				break
			}
			call := engine.ToolCall{ID: fmt.Sprint("call_", turn), Name: "calculator", Args: json.RawMessage(`{"expression":"6*7"}`)}
			add(engine.Decide, engine.KindDecision, &engine.Decided{ToolCalls: []engine.ToolCall{call}, Attempts: 1})
			add(engine.Decide, engine.KindUsage, &engine.UsageRecorded{Usage: engine.Usage{PromptTokens: 900, CompletionTokens: 20}})
			add(engine.Act, engine.KindToolStarted, &engine.ToolStarted{ID: call.ID, Name: call.Name, Args: call.Args})
			add(engine.Act, engine.KindToolFinished, &engine.ToolFinished{ID: call.ID, Name: call.Name, Status: engine.ToolOK, Result: "6*7 = 42", Attempts: 1})
			add(engine.Observe, engine.KindStepFinished, &engine.StepFinished{ToolCalls: 1})
		}
		add("", engine.KindRunFinished, &engine.RunFinished{StopReason: engine.StopAnswered, Answer: mdMessage, Steps: 14})
	}
	return evs
}

// BenchmarkResume10k is `agentty --resume ID` of a 10,000-event session up
// to its first frame: New (which replays the events), Init, the first
// window size and View. It reports CPU ms per resume (the target:
// ≤ 100 ms) and the Go heap in use while the console holds the session
// (target: ≤ 80 MB RSS for the process).
func BenchmarkResume10k(b *testing.B) { benchResume(b, resumeEvents()) }

// BenchmarkResume100k is BenchmarkResume10k for a 100,000-event session
// (the target: ≤ 300 ms CPU, ≤ 150 MB RSS).
func BenchmarkResume100k(b *testing.B) { benchResume(b, resumeEventsN(100000)) }

// BenchmarkKeysAt100k is a key at the console holding a 100,000-event
// session: a line up in the Chat, a page up, a letter typed, each with the
// frame it draws (the target: under 16 ms a key).
func BenchmarkKeysAt100k(b *testing.B) {
	m := New(Config{Model: "bench", Style: "dark", Events: resumeEventsN(100000)})
	m.Init()
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 45})
	m.View()
	keys := []tea.KeyMsg{{Type: tea.KeyPgUp}, {Type: tea.KeyRunes, Runes: []rune("a")}, {Type: tea.KeyPgDown}, {Type: tea.KeyBackspace}}
	start := cpuTime()
	i := 0
	for b.Loop() {
		m.Update(keys[i%len(keys)])
		m.View()
		i++
	}
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/key")
}

func benchResume(b *testing.B, evs []engine.Event) {
	var m *Model
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		m = New(Config{Model: "bench", Style: "dark", Events: evs})
		m.Init()
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 45})
		if v := m.View(); !strings.Contains(v, "Timeline") || !strings.Contains(v, `calculator expression="6*7"`) {
			b.Fatalf("the first frame does not show the session:\n%s", v)
		}
	}
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	evs = nil
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	runtime.KeepAlive(m)
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// longMarkdown is an answer of about n tokens (words) of Markdown:
// headings, paragraphs, lists, a table wider than the Chat and code,
// again and again.
func longMarkdown(n int) string {
	var b strings.Builder
	for part := 1; len(strings.Fields(b.String())) < n; part++ {
		fmt.Fprintf(&b, "## Part %d\n\n%s\n\n", part, longAnswer)
	}
	return b.String()
}

// BenchmarkStreamMarkdown streams an answer of 5,000 tokens of Markdown
// through Update and View at 160×45, a word a frame, then its decision and
// the frame that draws the finished answer. It reports tokens per second
// over the whole stream and the CPU time of that last frame (end-ms).
func BenchmarkStreamMarkdown(b *testing.B) {
	answer := longMarkdown(5000)
	toks := strings.SplitAfter(answer, " ")
	var end time.Duration
	b.ReportAllocs()
	for b.Loop() {
		m := longConsole(b, 40)
		for _, tok := range toks {
			m.Update(engineEventMsg{engine.Event{Kind: engine.KindTextDelta, Data: &engine.TextDelta{Text: tok}}})
			_ = m.View()
		}
		start := cpuTime()
		m.Update(engineEventMsg{engine.Event{Kind: engine.KindDecision, Data: &engine.Decided{Text: answer}}})
		if !strings.Contains(m.View(), "race detector") {
			b.Fatal("the finished answer is not on screen")
		}
		end += cpuTime() - start
	}
	b.ReportMetric(float64(b.N*len(toks))/b.Elapsed().Seconds(), "tokens/s")
	b.ReportMetric(float64(end.Microseconds())/1000/float64(b.N), "end-ms")
}
