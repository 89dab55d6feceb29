package offline

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentty/agentty/engine/calc"
)

// This file decides whether a message asks for arithmetic. The rule that
// keeps the offline model honest: the whole expression goes to the
// calculator, or the message is plainly refused, naming what was not
// understood; never a part of it. Messages that only look like arithmetic
// (dates, version numbers, phone numbers, facts stated about oneself) are not
// arithmetic and go where the rest of the planner sends them.

var (
	// framingRe is what people put before an expression: greetings,
	// politeness, and the verb of the question or command.
	framingRe = lazyRegexp(`^(?:(?:hey|hi|hello|ok|okay|so|um|quick question)\b[\s,!.:]*)*` +
		`(?:(?:please|pls|can you|could you|would you|will you)\s+)*` +
		`(?:(?:tell me|show me|let me know|give me)\s+)?` +
		`(?:what(?:'s|s|\s+is|\s+are|\s+does|\s+do|\s+would be|\s+will be)?|how much (?:is|are|does|do)|` +
		`calculate|calc|compute|evaluate|eval|solve|work out|figure out)(?:\s+|$|\b)` +
		`(?:(?:the\s+)?(?:value|result|answer)\s+(?:of|to)\s+)?(?:the\s+)?`)
	// trailingRe is what people put after one.
	trailingRe = lazyRegexp(`(?:[\s?.!,;:]+|\s*=\s*\??|\s+(?:please|pls|for me|thanks|thank you|thx|` +
		`(?:is|equals?|equal to|is equal to)(?:\s+what)?|then))+$`)
	// notArithmeticRe finds what looks like arithmetic and is not: version
	// numbers and IP addresses, dates, telephone numbers.
	notArithmeticRe = lazyRegexp(`\bv?\d+\.\d+\.\d+|\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{4}/\d{1,2}/\d{1,2}\b|` +
		`\b\d{1,2}[/-]\d{1,2}[/-]\d{4}\b|\b\d{3}-\d{3}-\d{4}\b|\(\d{3}\)\s*\d{3}-\d{4}\b|^\+\d+(?:[\s-]\d+){2,}$`)
	// wordOps are operators spelled out in words, and other spellings.
	wordOps = []struct {
		re   *lazyRe
		with string
	}{
		{lazyRegexp(`\b(?:the\s+)?square\s+root\s+of\s*|\bsqrt\s+of\s*`), "√"},
		{lazyRegexp(`\b(?:the\s+)?cube\s+root\s+of\s*`), "∛"},
		{lazyRegexp(`\s*\bsquared\b`), "^2"},
		{lazyRegexp(`\s*\bcubed\b`), "^3"},
		{lazyRegexp(`²`), "^2"},
		{lazyRegexp(`³`), "^3"},
		{lazyRegexp(`\*\*`), "^"},
		{lazyRegexp(`\b(?:to\s+the\s+power(?:\s+of)?|raised\s+to(?:\s+the\s+power\s+of)?)\b`), "^"},
		{lazyRegexp(`\bplus\b`), "+"},
		{lazyRegexp(`\bnegative\s*`), "-"},
		{lazyRegexp(`\bminus\b`), "-"},
		{lazyRegexp(`\b(?:times|multiplied\s+by)\b`), "*"},
		{lazyRegexp(`\b(?:divided\s+by|over)\b`), "/"},
		{lazyRegexp(`\s*\bper\s?cent\b`), "%"},
		{lazyRegexp(`\b(?:modulo|modulus)\b`), "mod"},
		// sqrt 16 is sqrt(16); log 100 is log(100).
		{lazyRegexp(`\b(sqrt|cbrt|abs|ln|log|log2|log10|exp|floor|ceil|round|trunc)\s+(\d[\d.]*(?:e[+-]?\d+)?)`), "$1($2)"},
	}
)

// maxMessage is the longest message, in bytes, read as a calculation; the
// calculator itself takes at most 1000 characters.
const maxMessage = 2000

// calcWords are the names the calculator understands; calcConstants are
// those of them that are numbers by themselves (pi, e).
var calcWords, calcConstants = func() (words, constants []string) {
	words = calc.Names()
	for _, w := range words {
		if _, err := calc.Evaluate(w); err == nil {
			constants = append(constants, w)
		}
	}
	return words, constants
}()

// arithmetic reads text as a request for arithmetic. It returns the
// expression to give the calculator, or a refusal to answer with, or neither
// when text is not arithmetic.
func arithmetic(text string) (expr, refusal string) {
	if len(text) > maxMessage {
		return "", "" // a pasted text, not a calculation
	}
	s := strings.ToLower(strings.TrimSpace(text))
	s = strings.NewReplacer("’", "'", "‘", "'", "\u00a0", " ").Replace(s)
	framed := false
	if loc := framingRe.FindStringIndex(s); loc != nil && loc[1] > 0 {
		s, framed = s[loc[1]:], true
	}
	if loc := trailingRe.FindStringIndex(s); loc != nil {
		end := loc[0]
		if s[end] == '!' && end > 0 && strings.IndexByte("0123456789)", s[end-1]) >= 0 {
			end++ // 3! may be a factorial, which the calculator does not know
		}
		framed = framed || strings.Contains(s[end:], "=")
		s = s[:end]
	}
	s = strings.TrimSpace(s)
	if s == "" || notArithmeticRe.MatchString(s) {
		return "", ""
	}
	s = separators(s)
	for _, w := range wordOps {
		s = w.re.ReplaceAllString(s, w.with)
	}
	s = strings.Join(strings.Fields(times(s)), " ")

	toks := scanExpression(s)
	var numbers, operators bool
	var unknown []string // phrases of consecutive unknown tokens, each once
	phrase := -1         // where the unknown phrase being read starts
	for i, t := range toks {
		switch t.kind {
		case exprNumber:
			numbers = true
			operators = operators || strings.Contains(t.text, "e") // 1e3 is a calculation
		case exprConstant:
			numbers = true
			operators = true // so is pi
		case exprOperator, exprFunction:
			operators = true
		case exprUnknown:
			numbers = numbers || t.text[0] >= '0' && t.text[0] <= '9' // 5kg
		}
		if t.kind != exprUnknown {
			continue
		}
		if phrase < 0 {
			phrase = t.start
		}
		if i+1 == len(toks) || toks[i+1].kind != exprUnknown {
			if p := s[phrase:t.end]; !slices.Contains(unknown, p) {
				unknown = append(unknown, p)
			}
			phrase = -1
		}
	}
	switch {
	case !numbers || !operators:
		return "", ""
	case len(unknown) == 0:
		return s, ""
	case framed || toks[0].kind != exprUnknown:
		return "", cannotCompute(unknown, s)
	}
	return "", ""
}

func cannotCompute(unknown []string, expr string) string {
	q := make([]string, len(unknown))
	for i, u := range unknown {
		q[i] = fmt.Sprintf("%q", u)
	}
	var funcs []string
	for _, w := range calcWords {
		if !slices.Contains(calcConstants, w) && w != "mod" && w != "of" {
			funcs = append(funcs, w)
		}
	}
	return fmt.Sprintf("I can't compute that offline: I don't understand %s in %q. "+
		"I can work out + - * / ^ and mod on numbers (like 2.5, 1e3 or 15%%, as in 15%% of 80), "+
		"with parentheses, the constants %s and the functions %s.\n\n(%s)",
		strings.Join(q, " and "), expr, strings.Join(calcConstants, ", "), strings.Join(funcs, ", "), shortHelp)
}

// separators drops thousands separators (1,000 and 12,345,678) outside
// parentheses, where a comma cannot separate a function's arguments.
func separators(s string) string {
	var b strings.Builder
	depth, last := 0, 0
	digit := func(i int) bool { return i >= 0 && i < len(s) && s[i] >= '0' && s[i] <= '9' }
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 && digit(i-1) && digit(i+1) && digit(i+2) && digit(i+3) && !digit(i+4) {
				b.WriteString(s[last:i])
				last = i + 1
			}
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

// times turns an x between two operands into * (3 x 4, 3x4, (1+2) x 3),
// but not the x of a hexadecimal number (0x10), which the calculator does not
// read.
func times(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c != 'x' {
			continue
		}
		l, r := i-1, i+1
		for l >= 0 && b[l] == ' ' {
			l--
		}
		for r < len(b) && b[r] == ' ' {
			r++
		}
		if l < 0 || r >= len(b) || !strings.ContainsRune("0123456789.)", rune(b[l])) || !strings.ContainsRune("0123456789.(", rune(b[r])) {
			continue
		}
		if b[l] == '0' && l == i-1 && (l == 0 || !isWordByte(b[l-1])) {
			continue // 0x10
		}
		b[i] = '*'
	}
	return string(b)
}

func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '.' || c == '_'
}

type exprKind int

const (
	exprNumber   exprKind = iota
	exprConstant          // pi, e
	exprOperator          // + - * / % ^ √ ∛ ( ) , mod of
	exprFunction          // sqrt, log, …
	exprUnknown           // anything the calculator would not read
)

type exprToken struct {
	kind       exprKind
	text       string
	start, end int // byte offsets in the scanned text
}

// scanExpression splits s into the calculator's tokens, marking those it
// would not understand. A number glued to an unknown word ("5kg", "3rd") is
// one unknown token.
func scanExpression(s string) []exprToken {
	var toks []exprToken
	depth := 0
	at := func(i int) rune { r, _ := utf8.DecodeRuneInString(s[i:]); return r }
	isDigit := func(i int) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }
	word := func(i int) int { // the end of the word at i
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '\'' {
				break
			}
			i += n
		}
		return i
	}
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		start := i
		kind := exprUnknown
		switch {
		case unicode.IsSpace(c):
			i += size
			continue
		case isDigit(i) || c == '.':
			for isDigit(i) || i < len(s) && s[i] == '.' {
				i++
			}
			if i < len(s) && s[i] == 'e' && (isDigit(i+1) || i+1 < len(s) && (s[i+1] == '+' || s[i+1] == '-') && isDigit(i+2)) {
				for i += 2; isDigit(i); i++ {
				}
			}
			kind = exprNumber
			if i < len(s) && unicode.IsLetter(at(i)) {
				if w := word(i); !slices.Contains(calcWords, s[i:w]) {
					kind, i = exprUnknown, w
				}
			}
		case unicode.IsLetter(c):
			i = word(i)
			w := s[start:i]
			switch {
			case w == "mod" || w == "of":
				kind = exprOperator
			case slices.Contains(calcConstants, w):
				kind = exprConstant
			case slices.Contains(calcWords, w):
				kind = exprFunction
			}
		default:
			i += size
			switch {
			case strings.ContainsRune("+-*/%^√∛×÷−·", c):
				kind = exprOperator
			case c == '(':
				depth++
				kind = exprOperator
			case c == ')' && depth > 0:
				depth--
				kind = exprOperator
			case c == ',' && depth > 0:
				kind = exprOperator
			}
		}
		toks = append(toks, exprToken{kind, s[start:i], start, i})
	}
	return toks
}
