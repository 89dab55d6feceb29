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
	return IsTerminal(RawOf(w))
}

// Sanitize makes foreign text safe to show on a terminal (ui.Sanitize).
func Sanitize(s string) string { return ui.Sanitize(s) }

// RawOf is the writer under w: what termSafe wrapped, else w.
func RawOf(w io.Writer) io.Writer {
	for {
		switch s := w.(type) {
		case *safeWriter:
			w = s.w
		case *pipeWriter:
			w = s.w
		default:
			return w
		}
	}
}

// PipeSafe returns a writer that cleans what goes through it whatever w
// is (ui.Cleaner: escapes and controls made visible, tabs and lines kept):
// for what agentty prints of a session (show, ls, export, diff), which is
// someone else's text and reaches a terminal later through less or head.
// Call the returned flush when nothing more is written.
func PipeSafe(w io.Writer) (io.Writer, func()) {
	p := &pipeWriter{w: w}
	return p, func() { io.WriteString(p.w, p.c.Flush()) }
}

type pipeWriter struct {
	w io.Writer
	c ui.Cleaner
}

func (p *pipeWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.c.Clean(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}
