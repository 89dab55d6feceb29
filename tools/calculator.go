package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/agentty/agentty/engine"
)

// Calculator evaluates arithmetic: + - * / % ^, parentheses, decimals and
// unary minus. It parses the expression itself; nothing is executed.
func Calculator() engine.Tool {
	return engine.Tool{
		Name:        "calculator",
		Description: "Evaluate an arithmetic expression with + - * / % ^ (power), parentheses, decimals and unary minus, e.g. \"(17*23) - 2^3\".",
		Schema: []byte(`{"type":"object","properties":{"expression":{"type":"string","minLength":1,"description":"the expression"}},` +
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

// Evaluate computes an arithmetic expression. ^ binds tightest and to the
// right; unary minus binds looser than ^ (-2^2 is -4), as in mathematics.
func Evaluate(expr string) (float64, error) {
	p := &parser{src: expr}
	if err := p.next(); err != nil {
		return 0, err
	}
	v, err := p.expr()
	if err != nil {
		return 0, err
	}
	if p.tok != tokEOF {
		return 0, p.errorf("unexpected %s", p.describe())
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, errors.New("the result is not a finite number")
	}
	return v, nil
}

type token int

const (
	tokEOF token = iota
	tokNum
	tokOp
)

type parser struct {
	src string
	pos int // next byte to scan
	tok token
	op  byte
	num float64
	at  int // where tok starts
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("calculator: %s at position %d of %q", fmt.Sprintf(format, args...), p.at+1, p.src)
}

func (p *parser) describe() string {
	switch p.tok {
	case tokEOF:
		return "end of expression"
	case tokNum:
		return "number " + FormatNumber(p.num)
	}
	return fmt.Sprintf("%q", p.op)
}

func (p *parser) next() error {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
	p.at = p.pos
	if p.pos >= len(p.src) {
		p.tok = tokEOF
		return nil
	}
	c := p.src[p.pos]
	if c >= '0' && c <= '9' || c == '.' {
		end := p.pos
		for end < len(p.src) && (p.src[end] >= '0' && p.src[end] <= '9' || p.src[end] == '.') {
			end++
		}
		v, err := strconv.ParseFloat(p.src[p.pos:end], 64)
		if err != nil {
			p.tok, p.op = tokOp, c
			return p.errorf("bad number %q", p.src[p.pos:end])
		}
		p.tok, p.num, p.pos = tokNum, v, end
		return nil
	}
	if strings.IndexByte("+-*/%^()", c) >= 0 {
		p.tok, p.op = tokOp, c
		p.pos++
		return nil
	}
	p.tok, p.op = tokOp, c
	return p.errorf("unexpected character %q", c)
}

// expr = term { (+|-) term }
func (p *parser) expr() (float64, error) {
	v, err := p.term()
	for err == nil && p.tok == tokOp && (p.op == '+' || p.op == '-') {
		op := p.op
		if err = p.next(); err != nil {
			break
		}
		var w float64
		if w, err = p.term(); op == '+' {
			v += w
		} else {
			v -= w
		}
	}
	return v, err
}

// term = unary { (*|/|%) unary }
func (p *parser) term() (float64, error) {
	v, err := p.unary()
	for err == nil && p.tok == tokOp && (p.op == '*' || p.op == '/' || p.op == '%') {
		op, at := p.op, p.at
		if err = p.next(); err != nil {
			break
		}
		var w float64
		if w, err = p.unary(); err != nil {
			break
		}
		switch {
		case op == '*':
			v *= w
		case w == 0:
			p.at = at
			return 0, p.errorf("division by zero")
		case op == '/':
			v /= w
		default:
			v = math.Mod(v, w)
		}
	}
	return v, err
}

// unary = - unary | + unary | power
func (p *parser) unary() (float64, error) {
	if p.tok == tokOp && (p.op == '-' || p.op == '+') {
		neg := p.op == '-'
		if err := p.next(); err != nil {
			return 0, err
		}
		v, err := p.unary()
		if neg {
			v = -v
		}
		return v, err
	}
	return p.power()
}

// power = primary [ ^ unary ]   (right-associative)
func (p *parser) power() (float64, error) {
	v, err := p.primary()
	if err != nil || p.tok != tokOp || p.op != '^' {
		return v, err
	}
	if err := p.next(); err != nil {
		return 0, err
	}
	w, err := p.unary()
	return math.Pow(v, w), err
}

// primary = number | ( expr )
func (p *parser) primary() (float64, error) {
	switch {
	case p.tok == tokNum:
		v := p.num
		return v, p.next()
	case p.tok == tokOp && p.op == '(':
		if err := p.next(); err != nil {
			return 0, err
		}
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		if p.tok != tokOp || p.op != ')' {
			return 0, p.errorf("expected ) but found %s", p.describe())
		}
		return v, p.next()
	}
	return 0, p.errorf("expected a number or ( but found %s", p.describe())
}
