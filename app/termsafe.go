package app

import (
	"io"

	"github.com/agentty/agentty/ui"
)

// TermSafe returns w as it is, or when w is a terminal, a writer that makes
// what goes through it safe to show (ui.Sanitizer: tabs expanded, escape
// sequences and control characters made visible, across writes). Answers,
// tool results and journals are someone else's text; piped, they stay raw.
func TermSafe(w io.Writer) io.Writer {
	if IsTerminal(w) {
		return &safeWriter{w: w}
	}
	return w
}

// FlushSafe writes what a safeWriter holds back (a trailing \r, half a
// character) at the end of the output.
func FlushSafe(w io.Writer) {
	if s, ok := w.(*safeWriter); ok {
		io.WriteString(s.w, s.z.Flush())
	}
}

type safeWriter struct {
	w io.Writer
	z ui.Sanitizer
}

func (s *safeWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, s.z.Sanitize(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// OnTerminal reports whether w is a terminal (termSafe wraps one).
func OnTerminal(w io.Writer) bool {
	if s, ok := w.(*safeWriter); ok {
		w = s.w
	}
	return IsTerminal(w)
}

// Sanitize makes foreign text safe to show on a terminal (ui.Sanitize).
func Sanitize(s string) string { return ui.Sanitize(s) }

// RawOf is the writer under w: what termSafe wrapped, else w.
func RawOf(w io.Writer) io.Writer {
	if s, ok := w.(*safeWriter); ok {
		return s.w
	}
	return w
}
