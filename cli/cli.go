// Package cli is agentty's command line, on cobra: one file per command,
// each an Options struct, a constructor that binds its flags (newXCmd) and
// a function that does the work (xRun), which tests call without parsing
// flags. The commands get what they share from a factory; what they build
// comes from app.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	_ "github.com/agentty/agentty/internal/quietterm" // before Bubble Tea's init: no terminal queries
)

// factory is what every command shares: the streams, the environment and
// the global flags (app.Options, which the commands' own flags fill in
// further).
type factory struct {
	In       io.Reader
	Out, Err io.Writer
	Getenv   func(string) string
	App      *app.Options
}

// exitCode is a command's exit status, once it has said why on stderr.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

// exit turns a command's exit status into its RunE's error.
func exit(code int) error {
	if code == 0 {
		return nil
	}
	return exitCode(code)
}

// Execute runs agentty with args and returns the exit code: 0 done, 1 an
// error, 2 bad usage (a flag, an argument, an unknown command), 3 the step
// limit, 130 cancelled.
func Execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	stdout, stderr = app.TermSafe(stdout), app.TermSafe(stderr)
	defer app.FlushSafe(stdout)
	defer app.FlushSafe(stderr)
	f := &factory{In: stdin, Out: stdout, Err: stderr, Getenv: getenv, App: &app.Options{}}
	root := newRootCmd(f)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	if c, ok := errors.AsType[exitCode](err); ok {
		return int(c)
	}
	// cobra's own: a flag, an argument or a command it does not know.
	fmt.Fprintf(stderr, "%s: %v\nUsage: %s\nRun '%s --help' for more.\n", cmd.CommandPath(), err, cmd.UseLine(), cmd.CommandPath())
	return app.ExitUsage
}

// version says which agentty this is: the module's version and the commit
// it was built from, as the build recorded them ("(devel)" and no commit
// for go run of a working tree without version control).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "agentty (unknown build)"
	}
	v := "agentty " + bi.Main.Version
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		v += " commit " + rev[:min(12, len(rev))]
		if settings["vcs.modified"] == "true" {
			v += " (modified)"
		}
	}
	return v + " " + bi.GoVersion
}

// newVersionCmd is `agentty version`, as --version.
func newVersionCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version (and the commit, when the build recorded it)",
		Example: "  agentty version\n  agentty --version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(f.Out, version())
			return nil
		},
	}
}
