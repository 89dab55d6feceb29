package ui

import tea "github.com/charmbracelet/bubbletea"

// WaitForGate and WaitForFollow are the commands Init starts, for the
// external tests to run one at a time.
func WaitForGate(g *Gate) tea.Cmd    { return waitForGate(g) }
func WaitForFollow(m *Model) tea.Cmd { return waitForFollow(m.cfg.Follow.Events) }
