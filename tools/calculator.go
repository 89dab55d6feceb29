package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentty/agentty/engine"
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
			strconv.Itoa(maxExpressionLen) + `,` +
			`"description":"an arithmetic expression, e.g. \"(17*23) + sqrt(16)\", \"2.5e3 / 4\" or \"15% of 80\""}},` +
			`"required":["expression"],"additionalProperties":false}`),
		Inline: true,
		Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct{ Expression string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			v, err := Evaluate(in.Expression)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s = %s", strings.TrimSpace(in.Expression), FormatNumber(v)), nil
		},
	}
}

// FormatNumber prints v without a trailing ".0" and without exponent for
// ordinary magnitudes.
func FormatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 12, 64)
}

// Limits that bound the cost of one evaluation: the parser is linear in the
// length, and its recursion is bounded by the depth.
const (
	maxExpressionLen = 1000 // characters
	maxDepth         = 100  // nested parentheses, signs, roots and powers
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

// CalculatorNames returns, sorted, every name the calculator understands:
// its functions, its constants and the word operators "mod" and "of".
func CalculatorNames() []string {
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

// Evaluate computes an arithmetic expression as CalculatorDescription says.
// ^ binds tightest and to the right; unary minus binds looser than ^ (-2^2
// is -4), as in mathematics. Any step whose result is not a finite real
// number is an error, so no answer is built on an overflow. Errors start
// with "calculator: " and name the position in the expression.
func Evaluate(expr string) (float64, error) {
	if n := utf8.RuneCountInString(expr); n > maxExpressionLen {
		return 0, fmt.Errorf("calculator: the expression is %d characters long, over the limit of %d", n, maxExpressionLen)
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

type tokKind int

const (
	tokEOF tokKind = iota
	tokNum
	tokName
	tokOp
)

type token struct {
	kind tokKind
	op   rune    // tokOp: one of + - * / % ^ ( ) , √ ∛ (× ÷ − already mapped)
	num  float64 // tokNum
	text string  // tokNum and tokName: the source text (names in lower case)
	at   int     // index of the first character in src
}

type parser struct {
	src   []rune
	pos   int // next character to scan
	tok   token
	depth int
}

func (p *parser) errorf(at int, format string, args ...any) error {
	return fmt.Errorf("calculator: %s at position %d of %q", fmt.Sprintf(format, args...), at+1, string(p.src))
}

func (p *parser) describe() string {
	switch p.tok.kind {
	case tokEOF:
		return "end of expression"
	case tokNum:
		return "number " + p.tok.text
	case tokName:
		return fmt.Sprintf("name %q", p.tok.text)
	}
	return fmt.Sprintf("%q", p.tok.op)
}

func (p *parser) next() error {
	t, pos, err := p.scan(p.pos)
	p.tok, p.pos = t, pos
	return err
}

// peek returns the token after the current one without consuming it.
func (p *parser) peek() (token, error) {
	t, _, err := p.scan(p.pos)
	return t, err
}

func isDigit(c rune) bool { return c >= '0' && c <= '9' }

// scan reads the token at pos and returns it with the position after it.
func (p *parser) scan(pos int) (token, int, error) {
	src := p.src
	for pos < len(src) && unicode.IsSpace(src[pos]) {
		pos++
	}
	if pos >= len(src) {
		return token{kind: tokEOF, at: pos}, pos, nil
	}
	at, c := pos, src[pos]
	switch {
	case isDigit(c) || c == '.':
		for pos < len(src) && (isDigit(src[pos]) || src[pos] == '.') {
			pos++
		}
		// An exponent only when digits follow: 1e3 and 2.5e-4, but 2e is 2 and e.
		if pos < len(src) && (src[pos] == 'e' || src[pos] == 'E') {
			end := pos + 1
			if end < len(src) && (src[end] == '+' || src[end] == '-') {
				end++
			}
			if end < len(src) && isDigit(src[end]) {
				for end < len(src) && isDigit(src[end]) {
					end++
				}
				pos = end
			}
		}
		text := string(src[at:pos])
		v, err := strconv.ParseFloat(text, 64)
		t := token{kind: tokNum, num: v, text: text, at: at}
		switch {
		case err == nil:
		case errors.Is(err, strconv.ErrRange) && !math.IsInf(v, 0):
			// Too small: it rounds to zero or a subnormal, which is right.
		case errors.Is(err, strconv.ErrRange):
			return t, pos, p.errorf(at, "number %s is too large", text)
		default:
			return t, pos, p.errorf(at, "bad number %q", text)
		}
		return t, pos, nil
	case unicode.IsLetter(c):
		for pos < len(src) && (unicode.IsLetter(src[pos]) || isDigit(src[pos]) || src[pos] == '_') {
			pos++
		}
		return token{kind: tokName, text: strings.ToLower(string(src[at:pos])), at: at}, pos, nil
	}
	op := c
	switch c {
	case '×', '·', '⋅':
		op = '*'
	case '÷', '∕':
		op = '/'
	case '−':
		op = '-'
	}
	t := token{kind: tokOp, op: op, at: at}
	if strings.ContainsRune("+-*/%^(),√∛", op) {
		return t, pos + 1, nil
	}
	return t, pos + 1, p.errorf(at, "unexpected character %q", c)
}

func (p *parser) isOp(op rune) bool { return p.tok.kind == tokOp && p.tok.op == op }

func (p *parser) isName(name string) bool { return p.tok.kind == tokName && p.tok.text == name }

// operandStarts says whether t can begin an operand: a number, a name other
// than the word operators, an opening parenthesis or a root sign.
func (p *parser) operandStarts(t token) bool {
	switch t.kind {
	case tokNum:
		return true
	case tokName:
		return t.text != "of" && t.text != "mod"
	case tokOp:
		return t.op == '(' || t.op == '√' || t.op == '∛'
	}
	return false
}

// check refuses a value that is not a finite real number.
func (p *parser) check(v float64, at int) (float64, error) {
	switch {
	case math.IsNaN(v):
		return 0, p.errorf(at, "the result is not a real number")
	case math.IsInf(v, 0):
		return 0, p.errorf(at, "the result is not a finite number (too large)")
	}
	return v, nil
}

// expr = term { (+|-) term }
//
// When the right term is a bare percentage and the left side is not, a + b%
// means a + a·b/100 (and a - b% likewise), as on a pocket calculator.
func (p *parser) expr() (float64, error) {
	v, vPct, err := p.term()
	for err == nil && (p.isOp('+') || p.isOp('-')) {
		op, at := p.tok.op, p.tok.at
		if err = p.next(); err != nil {
			break
		}
		var w float64
		var wPct bool
		if w, wPct, err = p.term(); err != nil {
			break
		}
		if wPct && !vPct {
			w *= v
		}
		if op == '+' {
			v += w
		} else {
			v -= w
		}
		vPct = vPct && wPct
		v, err = p.check(v, at)
	}
	return v, err
}

// term = unary { (* | / | % | mod | of) unary }; "of" only after a percentage.
// It reports whether it is one bare percentage.
func (p *parser) term() (float64, bool, error) {
	v, pct, err := p.unary()
	for err == nil {
		op, at := p.tok.op, p.tok.at
		switch {
		case p.isOp('*'), p.isOp('/'), p.isOp('%'):
		case p.isName("mod"):
			op = '%'
		case p.isName("of"):
			if !pct {
				return 0, false, p.errorf(at, `"of" must follow a percentage, as in 15%% of 80`)
			}
			op = '*'
		default:
			return v, pct, nil
		}
		if err = p.next(); err != nil {
			break
		}
		var w float64
		if w, _, err = p.unary(); err != nil {
			break
		}
		pct = false
		switch {
		case op == '*':
			v *= w
		case w == 0:
			return 0, false, p.errorf(at, "division by zero")
		case op == '/':
			v /= w
		default:
			v = math.Mod(v, w)
		}
		v, err = p.check(v, at)
	}
	return 0, false, err
}

// unary = (-|+) unary | (√|∛) unary | power
func (p *parser) unary() (float64, bool, error) {
	if p.depth++; p.depth > maxDepth {
		return 0, false, p.errorf(p.tok.at, "the expression is nested more than %d deep", maxDepth)
	}
	defer func() { p.depth-- }()
	switch {
	case p.isOp('-'), p.isOp('+'):
		neg := p.tok.op == '-'
		if err := p.next(); err != nil {
			return 0, false, err
		}
		v, pct, err := p.unary()
		if neg {
			v = -v
		}
		return v, pct, err
	case p.isOp('√'), p.isOp('∛'):
		root, at := p.tok.op, p.tok.at
		if err := p.next(); err != nil {
			return 0, false, err
		}
		v, _, err := p.unary()
		if err != nil {
			return 0, false, err
		}
		if root == '∛' {
			return math.Cbrt(v), false, nil
		}
		if v < 0 {
			return 0, false, p.errorf(at, "the square root of a negative number is not a real number")
		}
		return math.Sqrt(v), false, nil
	}
	return p.power()
}

// power = postfix [ ^ unary ]   (right-associative)
func (p *parser) power() (float64, bool, error) {
	v, pct, err := p.postfix()
	if err != nil || !p.isOp('^') {
		return v, pct, err
	}
	at := p.tok.at
	if err := p.next(); err != nil {
		return 0, false, err
	}
	w, _, err := p.unary()
	if err != nil {
		return 0, false, err
	}
	v, err = p.check(math.Pow(v, w), at)
	return v, false, err
}

// postfix = primary { % }, where a % followed by an operand is left to term
// as a remainder.
func (p *parser) postfix() (float64, bool, error) {
	v, err := p.primary()
	pct := false
	for err == nil && p.isOp('%') {
		if t, perr := p.peek(); perr == nil && p.operandStarts(t) {
			break
		}
		v, pct = v/100, true
		err = p.next()
	}
	return v, pct, err
}

// primary = number | constant | function ( expr {, expr} ) | ( expr )
func (p *parser) primary() (float64, error) {
	switch {
	case p.tok.kind == tokNum:
		v := p.tok.num
		return v, p.next()
	case p.isOp('('):
		if err := p.next(); err != nil {
			return 0, err
		}
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		if !p.isOp(')') {
			return 0, p.errorf(p.tok.at, "expected ) but found %s", p.describe())
		}
		return v, p.next()
	case p.tok.kind == tokName:
		name, at := p.tok.text, p.tok.at
		if c, ok := calcConsts[name]; ok {
			return c, p.next()
		}
		if f, ok := calcFuncs[name]; ok {
			return p.call(name, f)
		}
		if t, err := p.peek(); err == nil && t.kind == tokOp && t.op == '(' {
			return 0, fmt.Errorf("%w; the functions are %s", p.errorf(at, "unknown function %q", name), sortedKeys(calcFuncs))
		}
		return 0, fmt.Errorf("%w; the constants are %s, and there are no variables", p.errorf(at, "unknown name %q", name), sortedKeys(calcConsts))
	}
	return 0, p.errorf(p.tok.at, "expected a number or ( but found %s", p.describe())
}

// call evaluates name(args) with p.tok at the name.
func (p *parser) call(name string, f calcFunc) (float64, error) {
	at := p.tok.at
	if err := p.next(); err != nil {
		return 0, err
	}
	if !p.isOp('(') {
		return 0, p.errorf(at, "%s must be followed by (, as in %s(2)", name, name)
	}
	var args []float64
	for {
		if err := p.next(); err != nil {
			return 0, err
		}
		if len(args) == 0 && p.isOp(')') {
			break
		}
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		args = append(args, v)
		if p.isOp(')') {
			break
		}
		if !p.isOp(',') {
			return 0, p.errorf(p.tok.at, "expected , or ) but found %s", p.describe())
		}
	}
	switch {
	case len(args) < f.minArgs || f.maxArgs >= 0 && len(args) > f.maxArgs:
		want := fmt.Sprintf("%d to %d arguments", f.minArgs, f.maxArgs)
		switch {
		case f.maxArgs < 0:
			want = fmt.Sprintf("at least %d argument", f.minArgs)
		case f.minArgs == f.maxArgs:
			want = fmt.Sprintf("%d argument", f.minArgs)
		}
		return 0, p.errorf(at, "%s takes %s, not %d", name, want, len(args))
	}
	v, err := f.f(args)
	if err != nil {
		return 0, p.errorf(at, "%s %v", name, err)
	}
	if v, err = p.check(v, at); err != nil {
		return 0, err
	}
	return v, p.next() // past )
}
