package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agentty/agentty/app"
)

// splitResume takes --resume [ID] out of args: the flag package has no flag
// with an optional value.
func splitResume(args []string) (rest []string, resume bool, id string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--resume" || a == "-resume" {
			resume = true
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				id = args[i+1]
				i++
			}
			continue
		}
		if v, ok := strings.CutPrefix(a, "--resume="); ok {
			resume, id = true, v
			continue
		}
		rest = append(rest, a)
	}
	return rest, resume, id
}

func consoleCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	args, resume, resumeID := splitResume(args)
	fs := newFlags("agentty", stderr)
	var o app.Options
	register(&o, fs)
	step := fs.Bool("step", false, "start in step mode")
	fs.StringVar(&o.Session, "session", "", "resume this session (as --resume ID)")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	o.MaxStepsSet = flagSet(fs, "max-steps")
	if o.Session != "" {
		resume, resumeID = true, o.Session
	}
	if fs.NArg() > 0 {
		if isCommand(fs.Arg(0)) {
			fmt.Fprintf(stderr, "agentty: flags go after the command: agentty %s [flags]\n", fs.Arg(0))
			return app.ExitUsage
		}
		fmt.Fprintf(stderr, "agentty: unexpected %q (to run a task headless: agentty run TASK)\n", fs.Arg(0))
		return app.ExitUsage
	}
	return app.RunConsole(ctx, o, app.ConsoleStart{Resume: resume, ID: resumeID, Step: *step}, stdin, stderr, getenv)
}
