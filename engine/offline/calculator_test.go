package offline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/tools"
)

// The offline model's answers to phrasings people use for arithmetic, and to
// messages that only look like arithmetic. Each row runs through the real
// engine with the real tools, in a fresh session, and checks the exact
// answer: the whole expression goes to the calculator, or the model says
// plainly what it cannot compute.

const clockAnswer = "It is Monday 30 November 2026, 02:45:00 UTC (+00:00); UTC 2026-11-30T02:45:00Z."

// cannot is the refusal for an expression with parts the calculator would
// not read.
func cannot(expr string, unknown ...string) string {
	q := make([]string, len(unknown))
	for i, u := range unknown {
		q[i] = fmt.Sprintf("%q", u)
	}
	return fmt.Sprintf("I can't compute that offline: I don't understand %s in %q. "+
		"I can work out + - * / ^ and mod on numbers (like 2.5, 1e3 or 15%%, as in 15%% of 80), "+
		"with parentheses, the constants e, pi, π and the functions abs, cbrt, ceil, exp, floor, ln, log, log10, log2, "+
		"max, min, round, sqrt, trunc.\n\n"+
		"(I am the offline model; run with `--model` or `OPENAI_API_KEY` for a real one.)", strings.Join(q, " and "), expr)
}

// nothing is the answer to a question about something not remembered.
func nothing(key, phrase string) string {
	return fmt.Sprintf("I have nothing remembered about %q. Tell me with \"remember that %s is …\".\n\n"+
		"(I am the offline model; run with `--model` or `OPENAI_API_KEY` for a real one.)", key, phrase)
}

func TestOfflineArithmetic(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := tools.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	now := func() time.Time { return time.Date(2026, 11, 30, 2, 45, 0, 0, time.UTC) }
	reg, err := engine.NewRegistry(tools.Calculator(), tools.Clock(now), tools.Remember(), tools.Recall(), tools.Forget(),
		ws.ListDir(), ws.ReadFile())
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Config{Model: offline.Model{}, Tools: reg})

	rows := []struct {
		task   string
		before string // a message sent first, in the same session
		tools  string // the tools the answer used, comma-separated
		want   string
	}{
		// Questions.
		{task: "what is 17*23?", tools: "calculator", want: "17*23 = 391"},
		{task: "What's (2 + 3) times 4?", tools: "calculator", want: "(2 + 3) * 4 = 20"},
		{task: "what is (17*23)+sqrt(16)?", tools: "calculator", want: "(17*23)+sqrt(16) = 395"},
		{task: "what is 1e3 + 1", tools: "calculator", want: "1e3 + 1 = 1001"},
		{task: "what is 2.5e-3 * 4?", tools: "calculator", want: "2.5e-3 * 4 = 0.01"},
		{task: "what is 1e3?", tools: "calculator", want: "1e3 = 1000"},

		// Unicode operators and powers.
		{task: "what is 6 × 7?", tools: "calculator", want: "6 × 7 = 42"},
		{task: "what is 84 ÷ 2", tools: "calculator", want: "84 ÷ 2 = 42"},
		{task: "what is 50 − 8?", tools: "calculator", want: "50 − 8 = 42"},
		{task: "what is 6 · 7", tools: "calculator", want: "6 · 7 = 42"},
		{task: "what is 3²", tools: "calculator", want: "3^2 = 9"},

		// Percent and remainder: % followed by an operand is a remainder.
		{task: "how much is 15% of 80?", tools: "calculator", want: "15% of 80 = 12"},
		{task: "what is 80 + 15%?", tools: "calculator", want: "80 + 15% = 92"},
		{task: "what is 200 - 25%?", tools: "calculator", want: "200 - 25% = 150"},
		{task: "what is 20 percent of 150", tools: "calculator", want: "20% of 150 = 30"},
		{task: "what is 10 % 3?", tools: "calculator", want: "10 % 3 = 1"},
		{task: "what is 10 % -3?", tools: "calculator", want: "10 % -3 = -2.9"},
		{task: "what is 10 mod 3", tools: "calculator", want: "10 mod 3 = 1"},
		{task: "what is 10 modulo 4", tools: "calculator", want: "10 mod 4 = 2"},

		// Functions, constants, operators in words.
		{task: "what is sqrt(2)?", tools: "calculator", want: "sqrt(2) = 1.41421356237"},
		{task: "what is the square root of 16?", tools: "calculator", want: "√16 = 4"},
		{task: "what is the square root of 16 plus 9?", tools: "calculator", want: "√16 + 9 = 13"},
		{task: "what is the square root of (16 + 9)?", tools: "calculator", want: "√(16 + 9) = 5"},
		{task: "what is 3 squared?", tools: "calculator", want: "3^2 = 9"},
		{task: "what is 2 cubed", tools: "calculator", want: "2^3 = 8"},
		{task: "what is 2 to the power of 10?", tools: "calculator", want: "2 ^ 10 = 1024"},
		{task: "what is 2^10", tools: "calculator", want: "2^10 = 1024"},
		{task: "what is 2**10", tools: "calculator", want: "2^10 = 1024"},
		{task: "what is abs(-7.5)?", tools: "calculator", want: "abs(-7.5) = 7.5"},
		{task: "what is min(4, 2, 8) + max(1, 9)?", tools: "calculator", want: "min(4, 2, 8) + max(1, 9) = 11"},
		{task: "what is round(3.14159, 2)?", tools: "calculator", want: "round(3.14159, 2) = 3.14"},
		{task: "what is round(2.5)?", tools: "calculator", want: "round(2.5) = 3"},
		{task: "what is floor(7.9) + ceil(0.1)?", tools: "calculator", want: "floor(7.9) + ceil(0.1) = 8"},
		{task: "what is ln(e)?", tools: "calculator", want: "ln(e) = 1"},
		{task: "what is log(1000)?", tools: "calculator", want: "log(1000) = 3"},
		{task: "what is log(8, 2)?", tools: "calculator", want: "log(8, 2) = 3"},
		{task: "what is pi?", tools: "calculator", want: "pi = 3.14159265359"},
		{task: "what is 2 * pi * 3", tools: "calculator", want: "2 * pi * 3 = 18.8495559215"},
		{task: "what is 2π", tools: "calculator", want: `The calculator tool failed: calculator: unexpected name "π": is an operator missing before it? at position 2 of "2π"`},

		// Thousands separators.
		{task: "what is 1,000 + 1?", tools: "calculator", want: "1000 + 1 = 1001"},
		{task: "what is 1,234,567 * 2", tools: "calculator", want: "1234567 * 2 = 2469134"},

		// The calculator refuses: its error is the answer.
		{task: "what is 1/0", tools: "calculator", want: `The calculator tool failed: calculator: division by zero at position 2 of "1/0"`},
		{task: "what is 2 +", tools: "calculator", want: `The calculator tool failed: calculator: expected a number or ( but found end of expression at position 4 of "2 +"`},
		{task: "what is 10^400", tools: "calculator", want: `The calculator tool failed: calculator: the result is not a finite number (too large) at position 3 of "10^400"`},
		{task: "what is sqrt(-4)?", tools: "calculator", want: `The calculator tool failed: calculator: sqrt of a negative number is not a real number at position 1 of "sqrt(-4)"`},

		// More ways to ask.
		{task: "what does 6*7 equal?", tools: "calculator", want: "6*7 = 42"},
		{task: "what's 6*7 equal to?", tools: "calculator", want: "6*7 = 42"},
		{task: "whats 9 minus 3", tools: "calculator", want: "9 - 3 = 6"},
		{task: "what is negative 5 plus 3", tools: "calculator", want: "-5 + 3 = -2"},
		{task: "what is 7 divided by 2?", tools: "calculator", want: "7 / 2 = 3.5"},
		{task: "what is 3 x 4", tools: "calculator", want: "3 * 4 = 12"},
		{task: "what is 3x4?", tools: "calculator", want: "3*4 = 12"},
		{task: "what is 0.1 + 0.2?", tools: "calculator", want: "0.1 + 0.2 = 0.3"},

		// Commands.
		{task: "calculate 17*23", tools: "calculator", want: "17*23 = 391"},
		{task: "Please calculate (17*23)+sqrt(16).", tools: "calculator", want: "(17*23)+sqrt(16) = 395"},
		{task: "compute 2^0.5", tools: "calculator", want: "2^0.5 = 1.41421356237"},
		{task: "evaluate 100 / 8", tools: "calculator", want: "100 / 8 = 12.5"},
		{task: "can you work out 12 * 12 for me?", tools: "calculator", want: "12 * 12 = 144"},
		{task: "could you tell me what 6 * 7 is?", tools: "calculator", want: "6 * 7 = 42"},
		{task: "solve 5 + 5 * 2", tools: "calculator", want: "5 + 5 * 2 = 15"},

		// Noise around the expression.
		{task: "hey, what is 2+2?", tools: "calculator", want: "2+2 = 4"},
		{task: "ok so what's 3 * (4 + 5)??", tools: "calculator", want: "3 * (4 + 5) = 27"},
		{task: "2+2", tools: "calculator", want: "2+2 = 4"},
		{task: "2 + 2 = ?", tools: "calculator", want: "2 + 2 = 4"},
		{task: "12*12=", tools: "calculator", want: "12*12 = 144"},
		{task: "(1 + 2) * 3", tools: "calculator", want: "(1 + 2) * 3 = 9"},
		{task: "-5 + 3", tools: "calculator", want: "-5 + 3 = -2"},

		// What the calculator would not read: a plain refusal, never a part of the expression.
		{task: "what is 3 + 3!", want: cannot("3 + 3!", "!")},
		// Two requests joined by "and": both, in one decision.
		{task: "what is 2 + 2 and 3 + 3?", tools: "calculator,calculator", want: "2 + 2 = 4\n\n3 + 3 = 6"},
		{task: "what is 2+2 in binary?", want: cannot("2+2 in binary", "in binary")},
		{task: "what is 5 apples + 3 apples", want: cannot("5 apples + 3 apples", "apples")},
		{task: "what is 5kg + 3kg?", want: cannot("5kg + 3kg", "5kg", "3kg")},
		{task: "what is foo(16) + 1", want: cannot("foo(16) + 1", "foo")},
		{task: "what is x + 1?", want: cannot("x + 1", "x")},
		{task: "what is 0x10 + 1", want: cannot("0x10 + 1", "0x10")},
		{task: "what is my age plus 5?", before: "remember that my age is 42", want: cannot("my age + 5", "my age")},
		{task: "what is 10:30 + 2", want: cannot("10:30 + 2", ":")},
		{task: "what is $5 + $3?", want: cannot("$5 + $3", "$")},

		// Not arithmetic: memory, clock, dates, versions, phone numbers, files.
		{task: "what is my name?", before: "remember that my name is Ada", tools: "recall", want: "Your name is Ada."},
		{task: "what is my name?", want: nothing("name", "my name")},
		{task: "what time is it?", tools: "clock", want: clockAnswer},
		{task: "what day is it today?", tools: "clock", want: clockAnswer},
		{task: "what is the date 2024-01-15?", tools: "clock", want: clockAnswer},
		{task: "remember that my age is 42", tools: "remember", want: "Got it, I remembered age = 42."},
		{task: "my phone number is 555-123-4567", tools: "remember", want: "Got it, I remembered phone number = 555-123-4567."},
		{task: "what is my phone number?", before: "my phone number is 555-123-4567", tools: "recall", want: "Your phone number is 555-123-4567."},
		{task: "remember that my phone is 555-1234", tools: "remember", want: "Got it, I remembered phone = 555-1234."},
		{task: "what is 1.2.3?", want: nothing("1.2.3", "1.2.3")},
		{task: "what is version 1.2.3", want: nothing("version 1.2.3", "version 1.2.3")},
		{task: "what is 192.168.1.1", want: nothing("192.168.1.1", "192.168.1.1")},
		{task: "what is 2024-01-15", want: nothing("2024-01-15", "2024-01-15")},
		{task: "what is 12/25/2024", want: nothing("12/25/2024", "12/25/2024")},
		{task: "555-123-4567", want: offline.Help},
		{task: "call me at 555-123-4567", want: offline.Help},
		{task: "what is +44 20 7946 0958", want: nothing("+44 20 7946 0958", "+44 20 7946 0958")},
		{task: "what is 42?", want: nothing("42", "42")},
		{task: "what is 5!", want: nothing("5", "5!")},
		{task: "remember that 2+2 is 4", tools: "remember", want: "Got it, I remembered 2+2 = 4."},
		{task: "write me a poem", want: offline.Help},
		{task: "list files", tools: "list_dir", want: ".: 1 entries:\n\n```\nREADME.md (8 bytes)\n```"},
		{task: "read README.md", tools: "read_file", want: "README.md (lines 1-1 of 1):\n\n```\n     1\t# hello\n```"},
		{task: "forget my age", before: "remember that my age is 42", tools: "forget", want: "Done, I forgot age."},

		// More noise, more ways to ask.
		{task: "what is 2+2, please?", tools: "calculator", want: "2+2 = 4"},
		{task: "what is 2 + 2 thanks", tools: "calculator", want: "2 + 2 = 4"},
		{task: "quick question: what is 7*8?", tools: "calculator", want: "7*8 = 56"},
		{task: "WHAT IS 2 PLUS 2", tools: "calculator", want: "2 + 2 = 4"},
		{task: "what is 1 / 3", tools: "calculator", want: "1 / 3 = 0.333333333333"},
		{task: "how much is 3 × (4 − 1) ÷ 2", tools: "calculator", want: "3 × (4 − 1) ÷ 2 = 4.5"},
		{task: "calculate 2.5e3 / 4", tools: "calculator", want: "2.5e3 / 4 = 625"},
		{task: "what is the result of 6*7", tools: "calculator", want: "6*7 = 42"},
		{task: "what is 2 + 2 !", tools: "calculator", want: "2 + 2 = 4"},
		{task: "what is 100 + 10% + 10%", tools: "calculator", want: "100 + 10% + 10% = 121"},
	}
	if len(rows) < 60 {
		t.Fatalf("%d rows; the table promises at least 60", len(rows))
	}
	for _, tt := range rows {
		s := engine.NewSession("s")
		if tt.before != "" {
			if res := e.Run(context.Background(), s, tt.before, engine.SinkFunc(func(engine.Event) error { return nil })); res.StopReason != engine.StopAnswered {
				t.Fatalf("%q: stop %s %v", tt.before, res.StopReason, res.Err)
			}
		}
		res, used := runTask(e, s, tt.task)
		if res.StopReason != engine.StopAnswered {
			t.Errorf("%q: stop %s %v", tt.task, res.StopReason, res.Err)
			continue
		}
		if got := strings.Join(used, ","); got != tt.tools || res.Answer != tt.want {
			t.Errorf("%q:\n got tools %q, answer %q\nwant tools %q, answer %q", tt.task, got, res.Answer, tt.tools, tt.want)
		}
	}
}
