package ui

import "github.com/charmbracelet/lipgloss"

// Styles of the console. They degrade to plain text where the terminal has
// no colour (and in golden tests, which use the ASCII profile).
var (
	styleUser   = lipgloss.NewStyle().Foreground(lipgloss.Color("12")).Bold(true)
	styleAgent  = lipgloss.NewStyle().Foreground(lipgloss.Color("10")).Bold(true)
	styleTool   = lipgloss.NewStyle().Foreground(lipgloss.Color("14"))
	styleNote   = lipgloss.NewStyle().Foreground(lipgloss.Color("11")).Italic(true)
	styleDim    = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	styleOK     = lipgloss.NewStyle().Foreground(lipgloss.Color("10"))
	styleErr    = lipgloss.NewStyle().Foreground(lipgloss.Color("9"))
	styleRun    = lipgloss.NewStyle().Bold(true)
	styleKey    = lipgloss.NewStyle().Foreground(lipgloss.Color("13"))
	styleCursor = lipgloss.NewStyle().Reverse(true)
	styleTitle  = lipgloss.NewStyle().Bold(true)
	styleFocus  = lipgloss.NewStyle().Foreground(lipgloss.Color("12")).Bold(true)
	stylePause  = lipgloss.NewStyle().Foreground(lipgloss.Color("11")).Bold(true)
)

func statusStyle(s string) lipgloss.Style {
	switch s {
	case "ok", "answered", "proceed", "allow":
		return styleOK
	case "error", "denied", "cancelled", "step_limit", "abort", "deny", "block":
		return styleErr
	case "paused":
		return stylePause
	}
	if failedCommand(s) {
		return styleErr
	}
	return styleDim
}
