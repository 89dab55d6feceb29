package app

// Exit codes of agentty run.
const (
	ExitAnswered  = 0
	ExitError     = 1
	ExitUsage     = 2
	ExitStepLimit = 3
	ExitCancelled = 130
)
