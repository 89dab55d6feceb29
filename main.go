// Command agentty is a terminal console for running LLM agents, and the
// headless runner of the same engine (see cli for its commands). main only
// catches the signals and exits with the code the command gave; only main
// calls os.Exit.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentty/agentty/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
