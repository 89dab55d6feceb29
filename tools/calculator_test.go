package tools

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/calc"
)

func TestEvaluate(t *testing.T) {
	tests := []struct {
		expr string
		want float64
	}{
		{"17*23", 391},
		{"1 + 2 * 3", 7},
		{"(1 + 2) * 3", 9},
		{"10 / 4", 2.5},
		{"10 % 4", 2},
		{"2^10", 1024},
		{"2^3^2", 512}, // right-associative
		{"-2^2", -4},   // unary minus binds looser than ^
		{"(-2)^2", 4},
		{"--3", 3},
		{"-(4 - 6)", 2},
		{"0.1 + 0.2", 0.30000000000000004},
		{".5 * 4", 2},
		{"  7  ", 7},
		{"2 * -3", -6},
		{"100 - 10 - 1", 89}, // left-associative
		{"64 / 4 / 2", 8},
		{"2^-1", 0.5},

		// Scientific notation; "e" alone is the constant.
		{"1e3 + 1", 1001},
		{"2.5e-3 * 4", 0.01},
		{"1E+2", 100},
		{"1e-400", 0}, // underflows to zero, which is right to 12 digits
		{"e", math.E},
		{"2*e", 2 * math.E},
		{"e^2", math.E * math.E},

		// Functions and constants.
		{"(17*23)+sqrt(16)", 395},
		{"sqrt(4)", 2},
		{"SQRT(9)", 3},
		{"cbrt(-27)", -3},
		{"abs(-3.5)", 3.5},
		{"min(4, 2, 8)", 2},
		{"max(4, 2, 8)", 8},
		{"max(-1)", -1},
		{"round(2.5)", 3},
		{"round(-2.5)", -3}, // halves away from zero
		{"round(3.14159, 2)", 3.14},
		{"round(1234, -2)", 1200},
		{"floor(-1.5)", -2},
		{"ceil(1.2)", 2},
		{"trunc(-1.7)", -1},
		{"exp(0)", 1},
		{"ln(e)", 1},
		{"log(1000)", 3}, // base 10
		{"log(8, 2)", 3},
		{"log2(1024)", 10},
		{"log10(0.01)", -2},
		{"pi", math.Pi},
		{"2 * π", 2 * math.Pi},
		{"√16", 4},
		{"√(9 + 16)", 5},
		{"√16 * 2", 8},
		{"∛27", 3},
		{"-√4", -2},
		{"max(1, min(5, 3), 2) ^ 2", 9},

		// Unicode operators.
		{"6 × 7", 42},
		{"84 ÷ 2", 42},
		{"50 − 8", 42},
		{"6·7", 42},

		// Percent and remainder: the ambiguous cases.
		{"15% of 80", 12},
		{"15 % of 80", 12},
		{"15% * 80", 12},
		{"20%", 0.2},
		{"50%%", 0.005},
		{"80 + 15%", 92},      // a + b% adds b percent of a
		{"80 - 25%", 60},      // a - b% takes b percent of a
		{"80 + (15%)", 80.15}, // in parentheses, just 0.15
		{"20% + 30%", 0.5},    // percentages add as numbers
		{"100 + 10% + 10%", 121},
		{"100 + 10% * 2", 100.2}, // 10% * 2 is not a bare percentage
		{"80 + 15% of 80", 92},
		{"10 % 3", 1},
		{"10%3", 1},
		{"10 mod 3", 1},
		{"10 MOD 3", 1},
		{"-7 mod 3", -1}, // the sign of the dividend, as Go's math.Mod
		{"10 mod -3", 1},
		{"10 % -3", -2.9}, // a % before a sign is a percent sign: 10% - 3
		{"10 % (3)", 1},
		{"10 % pi", math.Mod(10, math.Pi)},
		{"(1 + 1)%", 0.02},
		{"200 * 5%", 10},
		{"-10%", -0.1},
		{"100 + -10%", 90},
	}
	for _, tt := range tests {
		got, err := Evaluate(tt.expr)
		if err != nil || math.Abs(got-tt.want) > 1e-12*math.Max(1, math.Abs(tt.want)) {
			t.Errorf("Evaluate(%q) = %v, %v; want %v", tt.expr, got, err, tt.want)
		}
	}
}

func TestEvaluateErrors(t *testing.T) {
	tests := []struct {
		expr, want string
	}{
		{"", "expected a number or ( but found end of expression"},
		{"1 +", "expected a number or ( but found end of expression"},
		{"2 * (3 + 4", "expected ) but found end of expression"},
		{"1 / 0", "division by zero at position 3"},
		{"5 % 0", "division by zero"},
		{"5 mod 0", "division by zero"},
		{"os.exit(1)", `unknown name "os" at position 1`},
		{"1 2", "unexpected number 2: is an operator missing before it?"},
		{"1..2", `bad number "1..2"`},
		{"1.2.3", `bad number "1.2.3"`},
		{"2 ** 3", `expected a number or ( but found '*'`},
		{"10^400", "not a finite number"},
		{"1e400", "number 1e400 is too large"},
		{"2^2000 / 2^1990", "not a finite number"}, // no answer is built on an overflow
		{"(-8)^(1/3)", "not a real number"},
		{"sqrt(-4)", "sqrt of a negative number is not a real number"},
		{"√-4", "not a real number"},
		{"ln(0)", "ln is only defined for positive numbers"},
		{"log(-1)", "log is only defined for positive numbers"},
		{"log(8, 1)", "log needs a base that is positive and not 1"},
		{"round(2.5, 0.5)", "round needs whole-number digits"},
		{"sqrt(1, 2)", "sqrt takes 1 argument, not 2"},
		{"min()", "min takes at least 1 argument, not 0"},
		{"round(1, 2, 3)", "round takes 1 to 2 arguments, not 3"},
		{"sqrt 16", "sqrt must be followed by (, as in sqrt(2)"},
		{"max(1 2)", "expected , or ) but found number 2"},
		{"foo(16)", `unknown function "foo" at position 1`},
		{"x + 1", `unknown name "x" at position 1`},
		{"2pi", `unexpected name "pi": is an operator missing before it?`},
		{"2(3+4)", `unexpected '(': is an operator missing before it?`},
		{"3 of 4", `"of" must follow a percentage, as in 15% of 80`},
		{"1,000 + 1", `unexpected ','`},
		{"2 $ 3", `unexpected character '$'`},
		{"import os", `unknown name "import"`},
		{`"a" + "b"`, `unexpected character '"'`},
		{"[1, 2]", `unexpected character '['`},
		{strings.Repeat("(", 101) + "1" + strings.Repeat(")", 101), "nested more than 100 deep"},
		{strings.Repeat("-", 200) + "1", "nested more than 100 deep"},
		{strings.Repeat("1+", 500) + "1", "over the limit of 1000"},
	}
	for _, tt := range tests {
		_, err := Evaluate(tt.expr)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Evaluate(%q) error = %v, want %q", tt.expr, err, tt.want)
		}
	}
}

func TestFormatNumber(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{
		{391, "391"}, {-4, "-4"}, {0.1 + 0.2, "0.3"}, {1.0 / 3, "0.333333333333"},
		{1e20, "1e+20"}, {2.5e-7, "2.5e-07"}, {math.Pi, "3.14159265359"},
	} {
		if got := calc.Format(tt.v); got != tt.want {
			t.Errorf("calc.Format(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
	if v, err := Evaluate("-0"); err != nil || calc.Format(v) != "0" {
		t.Errorf(`Evaluate("-0") = %v, %v; want 0 printed as "0"`, v, err)
	}
}

func TestCalculatorTool(t *testing.T) {
	c := Calculator()
	for _, tt := range []struct{ args, want string }{
		{`{"expression":"17*23"}`, "17*23 = 391"},
		{`{"expression":" (17*23)+sqrt(16) "}`, "(17*23)+sqrt(16) = 395"},
		{`{"expression":"15% of 80"}`, "15% of 80 = 12"},
		{`{"expression":"1e3 + 1"}`, "1e3 + 1 = 1001"},
	} {
		out, err := c.Func(context.Background(), &engine.Call{Args: json.RawMessage(tt.args)})
		if err != nil || out != tt.want {
			t.Errorf("calculator %s = %q, %v; want %q", tt.args, out, err, tt.want)
		}
	}
	reg, err := engine.NewRegistry(Builtins()...)
	if err != nil {
		t.Fatalf("builtins do not register: %v", err)
	}
	for _, args := range []string{`{"expression":""}`, `{"expression":"` + strings.Repeat("1", 1001) + `"}`, `{"expr":"1"}`} {
		if err := reg.Validate("calculator", json.RawMessage(args)); err == nil {
			t.Errorf("the schema accepts %s", args)
		}
	}
	// The description states every rule the evaluator follows.
	for _, want := range []string{"1e3", "15% of 80", "80 + 15% = 92", "10 mod 3", "10 % -3", "log (base 10", "ln", "pi (π)", "×", "2*pi"} {
		if !strings.Contains(c.Description, want) {
			t.Errorf("the description does not mention %q", want)
		}
	}
	for _, name := range calc.Names() {
		if name != "mod" && name != "of" && !strings.Contains(c.Description, name) {
			t.Errorf("the description does not mention %q", name)
		}
	}
}

func FuzzEvaluate(f *testing.F) {
	for _, s := range []string{
		"17*23", "(1+2)^-3", "-.5%2", "((((", "1e5", "2^^2",
		"(17*23)+sqrt(16)", "15% of 80", "80 + 15%", "10 % -3", "round(2.5, 1)", "log(8, 2)",
		"max(1, min(2, 3))", "√16 × 2 ÷ 4 − 1", "2.5e-3", "e^pi", "10 mod 3", "1e308*10",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Evaluate(s)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "calculator: ") || strings.Contains(msg, "\n") || v != 0 {
				t.Fatalf("Evaluate(%q) = %v, %q: want 0 and a one-line error starting with \"calculator: \"", s, v, msg)
			}
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("Evaluate(%q) = %v without an error", s, v)
		}
		// What the tool prints reads back as (nearly) the same number.
		text := calc.Format(v)
		back, err := Evaluate(text)
		if err != nil || math.Abs(back-v) > 1e-11*math.Abs(v) {
			t.Fatalf("Evaluate(%q) = %v, printed %q, which reads back as %v, %v", s, v, text, back, err)
		}
		// Parentheses change nothing (unless they reach a limit).
		wrapped := "(" + s + ")"
		if w, err := Evaluate(wrapped); err == nil && w != v {
			t.Fatalf("Evaluate(%q) = %v but Evaluate(%q) = %v", s, v, wrapped, w)
		} else if err != nil && !strings.Contains(err.Error(), "limit") && !strings.Contains(err.Error(), "nested") {
			t.Fatalf("Evaluate(%q) = %v but Evaluate(%q) fails: %v", s, v, wrapped, err)
		}
	})
}
