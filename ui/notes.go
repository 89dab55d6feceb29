package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// A note in the status line says what a key or a command just did, or why
// it did nothing; it must not outstay its cause. It goes noteLife after it
// was set (a newer note starts its own clock); one about the run going
// ("wait for the run…") goes when the run ends; the note of a cancel
// stays until the cancel is done, and the question before quitting, when
// it goes, takes its armed ctrl+c with it.

// noteLife is how long a note stays.
const noteLife = 8 * time.Second

// noteExpiredMsg is the clock of the note numbered seq.
type noteExpiredMsg struct {
	seq  int
	note string
}

// noteChanged starts the clock of a note set since before, if one was.
func (m *Model) noteChanged(before string) tea.Cmd {
	if m.note == before || m.note == "" || m.note == noteCancelling {
		return nil
	}
	m.noteSeq++
	return noteClock{seq: m.noteSeq, note: m.note}.wait
}

// noteClock is the clock of a note: its command waits noteLife and says so.
type noteClock noteExpiredMsg

func (c noteClock) wait() tea.Msg {
	time.Sleep(noteLife)
	return noteExpiredMsg(c)
}

// noteExpired takes down the note whose clock ended, unless another took
// its place.
func (m *Model) noteExpired(e noteExpiredMsg) {
	if e.seq != m.noteSeq || m.note != e.note {
		return
	}
	if m.note == noteQuitAsk {
		m.quitting = false
	}
	m.note, m.runNote = "", false
}

// noteOfRun sets a note about the run going: it goes when the run ends.
func (m *Model) noteOfRun(text string) {
	m.note, m.runNote = text, true
}
