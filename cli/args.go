package cli

import (
	"errors"

	"github.com/agentty/agentty/app"
)

// arg is the i-th of args, or "" when there are fewer.
func arg(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}

// codeOf is the exit code of a command that failed with err: 2 for an
// error of usage (app.UsageError), else 1.
func codeOf(err error) int {
	if errors.As(err, new(app.UsageError)) {
		return app.ExitUsage
	}
	return app.ExitError
}
