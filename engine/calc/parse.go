package calc

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// The calculator's parser: a scanner and a recursive-descent parser over
// float64 that can only do arithmetic.

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
