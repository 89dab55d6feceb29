package main

import (
	"context"
	"fmt"
	"io"
)

func consoleCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fmt.Fprintln(stderr, "agentty: the console is not built yet; use: agentty run --model offline \"what is 17*23?\"")
	return exitError
}
