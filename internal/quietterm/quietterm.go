// Package quietterm keeps agentty from asking the terminal anything it
// does not need to know. Bubble Tea v1's init asks Lip Gloss whether the
// background is dark, and Lip Gloss asks the terminal on stdout (an OSC 11
// query, then a cursor position report, ESC ]11;? and ESC [6n), waiting up
// to 5 s for the reply. agentty draws with fixed styles (dark or notty),
// never by the background, so the answer is unused, and the queries are
// garbage in the output of every command whose stdout is a pseudo-terminal
// that is not a terminal emulator (script, expect, CI logs, pagers).
//
// Importing this package (cli does, for its side effect) tells Lip Gloss
// the answer first. Go initializes the packages of a program in the order
// of their import paths, each once all it imports is initialized (the
// spec, "Package initialization", since Go 1.21): this package imports
// only Lip Gloss and sorts before github.com/charmbracelet/bubbletea, so
// its init runs before Bubble Tea's, whichever of ours imports it. TestNoTerminalQueries (cli) runs
// commands under a pseudo-terminal and finds no escape sequence.
package quietterm

import "github.com/charmbracelet/lipgloss"

func init() {
	// The value is not used for drawing: only that it is set, so that
	// nothing asks the terminal for it.
	lipgloss.SetHasDarkBackground(true)
}
