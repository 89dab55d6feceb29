package tools

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/calc"
)

// CalculatorDescription is what the model reads about the calculator: every
// rule the evaluator follows, the ambiguous ones (percent or remainder,
// log's base) included.
const CalculatorDescription = "Evaluate an arithmetic expression; the result reads \"EXPRESSION = RESULT\". " +
	"Numbers: 42, 3.5, .5, 1e3, 2.5e-4 (no thousands separators). " +
	"Operators: + - * / and ^ (power, right-associative: 2^3^2 = 512; -2^2 = -4), parentheses; × ÷ − are accepted too. " +
	"Remainder: 10 % 3 = 1, or 10 mod 3. " +
	"Percent: a % that is not followed by a number, a name or ( is a percent sign: 15% = 0.15, 15% of 80 = 12, " +
	"and a + b% or a - b% adds or takes b percent of a (80 + 15% = 92, 80 - 25% = 60); " +
	"so 10 % -3 means 10% - 3 (write 10 mod -3 for a remainder), and (15%) in parentheses is just 0.15. " +
	"Functions: sqrt, cbrt, abs, min(a, b, …), max(a, b, …), round(x) (halves away from zero) or round(x, digits), " +
	"floor, ceil, trunc, exp, ln (natural log), log (base 10; log(x, base) for another base), log2, log10; " +
	"√x and ∛x work too. Constants: pi (π), e. " +
	"Nothing else: no variables, no implicit multiplication (write 2*pi, not 2pi), no trigonometry. " +
	"Results are shown to 12 significant digits."

// Calculator evaluates arithmetic as CalculatorDescription says. It parses
// the expression itself and knows only numbers, operators and a fixed table
// of functions and constants: nothing is looked up or executed.
func Calculator() engine.Tool {
	return engine.Tool{
		Name:        "calculator",
		Description: CalculatorDescription,
		Schema: []byte(`{"type":"object","properties":{"expression":{"type":"string","minLength":1,"maxLength":` +
			strconv.Itoa(calc.MaxLen) + `,` +
			`"description":"an arithmetic expression, e.g. \"(17*23) + sqrt(16)\", \"2.5e3 / 4\" or \"15% of 80\""}},` +
			`"required":["expression"],"additionalProperties":false}`),
		Inline:     true,
		Repeatable: true,
		Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct{ Expression string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			v, err := calc.Evaluate(in.Expression)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s = %s", strings.TrimSpace(in.Expression), calc.Format(v)), nil
		},
	}
}

// Evaluate computes an arithmetic expression as CalculatorDescription
// says (calc.Evaluate).
func Evaluate(expr string) (float64, error) { return calc.Evaluate(expr) }
