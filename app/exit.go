package app

// Exit codes of agentty run.
const (
	ExitAnswered  = 0
	ExitError     = 1
	ExitUsage     = 2
	ExitStepLimit = 3
	ExitBudget    = 4 // the run spent its --max-cost or --max-tokens
	ExitCancelled = 130
)
