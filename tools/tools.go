// Package tools holds agentty's built-in tools. Each returns an engine.Tool;
// failures the model should read come back as errors, which the engine turns
// into tool results.
package tools

import "github.com/agentty/agentty/engine"

// Builtins returns the tools every agent has: calculator, clock and the
// memory tools.
func Builtins() []engine.Tool {
	return []engine.Tool{Calculator(), Clock(nil), Remember(), Recall(), Forget()}
}
