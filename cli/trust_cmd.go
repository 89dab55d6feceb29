package cli

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"
)

// trustOptions are the flags and arguments of agentty trust.
type trustOptions struct {
	*factory
	List   bool
	Revoke bool
	Args   []string
}

// newTrustCmd binds the flags of its command into its options.
func newTrustCmd(f *factory) *cobra.Command {
	opts := &trustOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "trust [DIR] | --list | --revoke DIR",
		Short: "Trust a folder's .agentty.json, .mcp.json and .claude/settings.json (default: the workspace)",
		Example: `  agentty trust
  agentty trust ~/src/project
  agentty trust --list
  agentty trust --revoke ~/src/project`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			return exit(trustRun(opts))
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&opts.List, "list", false, "list the trusted folders")
	fs.BoolVar(&opts.Revoke, "revoke", false, "stop trusting DIR")
	return cmd
}

// trustRun runs `agentty trust [DIR] | --list | --revoke DIR`.
func trustRun(opts *trustOptions) int {
	stdout, stderr, getenv := opts.Out, opts.Err, opts.Getenv
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty trust: "+format+"\n", a...)
		return code
	}
	if len(opts.Args) > 1 || (opts.List && (opts.Revoke || len(opts.Args) > 0)) {
		return fail(app.ExitUsage, "usage: agentty trust [DIR] | --list | --revoke DIR")
	}
	store, err := config.LoadTrust(getenv)
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	if opts.List {
		if len(store.Folders) == 0 {
			fmt.Fprintln(stdout, "No folder is trusted.")
			return 0
		}
		for _, dir := range slices.Sorted(maps.Keys(store.Folders)) {
			f := store.Folders[dir]
			state := "trusted"
			switch w, err := config.ReadWorkspace(dir, &config.Settings{}); {
			case err != nil:
				state = "unreadable: " + err.Error()
			case w == nil && f.SHA256 != "":
				state = "its .agentty.json and .mcp.json are gone"
			case w != nil && w.Sum != f.SHA256:
				state = "changed since trusted: trust it again to use it"
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\n", dir, f.TrustedAt.Local().Format("2006-01-02 15:04"), state)
		}
		return 0
	}
	if opts.Revoke {
		if len(opts.Args) != 1 {
			return fail(app.ExitUsage, "--revoke needs the folder: agentty trust --revoke DIR")
		}
		dir, err := config.RealDir(arg(opts.Args, 0))
		if err != nil {
			return fail(app.ExitError, "%v", err)
		}
		ok, err := store.Revoke(dir)
		switch {
		case err != nil:
			return fail(app.ExitError, "%v", err)
		case !ok:
			return fail(app.ExitError, "%s was not trusted", dir)
		}
		fmt.Fprintf(stdout, "%s is no longer trusted.\n", dir)
		return 0
	}
	if err := config.TrustFolder(store, cmp.Or(arg(opts.Args, 0), "."), stdout, app.TermWidth(stdout), getenv); err != nil {
		return fail(app.ExitError, "%v", err)
	}
	return 0
}
