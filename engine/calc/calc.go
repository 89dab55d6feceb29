// Package calc is the calculator's arithmetic: a parser of expressions over
// numbers, operators and a fixed table of functions and constants, with
// nothing looked up or executed. The calculator tool and the offline model
// both use it; it imports nothing.
package calc

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Format prints v without a trailing ".0" and without exponent for
// ordinary magnitudes.
func Format(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 12, 64)
}

// Limits that bound the cost of one evaluation: the parser is linear in the
// length, and its recursion is bounded by the depth.
const (
	MaxLen   = 1000 // characters
	maxDepth = 100  // nested parentheses, signs, roots and powers
)

type calcFunc struct {
	minArgs, maxArgs int // maxArgs < 0: any number
	f                func(x []float64) (float64, error)
}

func unaryFunc(f func(float64) float64) calcFunc {
	return calcFunc{1, 1, func(x []float64) (float64, error) { return f(x[0]), nil }}
}

var errDomain = errors.New("is only defined for positive numbers")

func logFunc(f func(float64) float64) calcFunc {
	return calcFunc{1, 1, func(x []float64) (float64, error) {
		if x[0] <= 0 {
			return 0, errDomain
		}
		return f(x[0]), nil
	}}
}

var calcFuncs = map[string]calcFunc{
	"sqrt": {1, 1, func(x []float64) (float64, error) {
		if x[0] < 0 {
			return 0, errors.New("of a negative number is not a real number")
		}
		return math.Sqrt(x[0]), nil
	}},
	"cbrt":  unaryFunc(math.Cbrt),
	"abs":   unaryFunc(math.Abs),
	"floor": unaryFunc(math.Floor),
	"ceil":  unaryFunc(math.Ceil),
	"trunc": unaryFunc(math.Trunc),
	"exp":   unaryFunc(math.Exp),
	"min":   {1, -1, func(x []float64) (float64, error) { return slices.Min(x), nil }},
	"max":   {1, -1, func(x []float64) (float64, error) { return slices.Max(x), nil }},
	"round": {1, 2, func(x []float64) (float64, error) {
		if len(x) == 1 {
			return math.Round(x[0]), nil
		}
		d := x[1]
		if d != math.Trunc(d) || d < -15 || d > 15 {
			return 0, errors.New("needs whole-number digits from -15 to 15")
		}
		p := math.Pow(10, d)
		if r := math.Round(x[0]*p) / p; !math.IsInf(r, 0) && !math.IsNaN(r) {
			return r, nil
		}
		return x[0], nil // too large to have digits that far right
	}},
	"ln":    logFunc(math.Log),
	"log2":  logFunc(math.Log2),
	"log10": logFunc(math.Log10),
	"log": {1, 2, func(x []float64) (float64, error) {
		if x[0] <= 0 {
			return 0, errDomain
		}
		if len(x) == 1 {
			return math.Log10(x[0]), nil
		}
		if x[1] <= 0 || x[1] == 1 {
			return 0, errors.New("needs a base that is positive and not 1")
		}
		return math.Log(x[0]) / math.Log(x[1]), nil
	}},
}

var calcConsts = map[string]float64{"pi": math.Pi, "π": math.Pi, "e": math.E}

// Names returns, sorted, every name the calculator understands:
// its functions, its constants and the word operators "mod" and "of".
func Names() []string {
	names := []string{"mod", "of"}
	for n := range calcFuncs {
		names = append(names, n)
	}
	for n := range calcConsts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func sortedKeys[V any](m map[string]V) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

// Evaluate computes an arithmetic expression as the calculator tool describes it.
// ^ binds tightest and to the right; unary minus binds looser than ^ (-2^2
// is -4), as in mathematics. Any step whose result is not a finite real
// number is an error, so no answer is built on an overflow. Errors start
// with "calculator: " and name the position in the expression.
func Evaluate(expr string) (float64, error) {
	if n := utf8.RuneCountInString(expr); n > MaxLen {
		return 0, fmt.Errorf("calculator: the expression is %d characters long, over the limit of %d", n, MaxLen)
	}
	p := &parser{src: []rune(expr)}
	if err := p.next(); err != nil {
		return 0, err
	}
	v, err := p.expr()
	if err != nil {
		return 0, err
	}
	if p.tok.kind != tokEOF {
		if p.operandStarts(p.tok) {
			return 0, p.errorf(p.tok.at, "unexpected %s: is an operator missing before it?", p.describe())
		}
		return 0, p.errorf(p.tok.at, "unexpected %s", p.describe())
	}
	if v == 0 {
		v = 0 // no "-0"
	}
	return v, nil
}
