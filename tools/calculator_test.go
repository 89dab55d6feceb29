package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
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
	}
	for _, tt := range tests {
		got, err := Evaluate(tt.expr)
		if err != nil || got != tt.want {
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
		{"os.exit(1)", `unexpected character 'o' at position 1`},
		{"1 2", "unexpected number 2"},
		{"1..2", `bad number "1..2"`},
		{"2 ** 3", `expected a number or ( but found '*'`},
		{"10^400", "not a finite number"},
		{"sqrt(4)", "unexpected character 's'"},
	}
	for _, tt := range tests {
		_, err := Evaluate(tt.expr)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Evaluate(%q) error = %v, want %q", tt.expr, err, tt.want)
		}
	}
}

func TestCalculatorTool(t *testing.T) {
	c := Calculator()
	out, err := c.Func(context.Background(), &engine.Call{Args: json.RawMessage(`{"expression":"17*23"}`)})
	if err != nil || out != "17*23 = 391" {
		t.Errorf("calculator = %q, %v", out, err)
	}
	if _, err := engine.NewRegistry(Builtins()...); err != nil {
		t.Errorf("builtins do not register: %v", err)
	}
}

func FuzzEvaluate(f *testing.F) {
	for _, s := range []string{"17*23", "(1+2)^-3", "-.5%2", "((((", "1e5", "2^^2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Evaluate(s) // must not panic
	})
}
