package cli

import (
	"cmp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/workflow"
)

// completeSessions completes a session id: the sessions of the store the
// flags name (--data-dir, --nats), newest first, each with its title.
func completeSessions(f *factory) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		store, err := f.App.Store(f.Getenv)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		defer store.Close()
		list, _ := store.List()
		var out []cobra.Completion
		for _, l := range list {
			if strings.HasPrefix(l.ID, toComplete) {
				out = append(out, cobra.CompletionWithDesc(l.ID, engine.OneLine(l.Title, 60)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// firstArg completes the first argument with c, and nothing after it.
func firstArg(c cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return c(cmd, args, toComplete)
	}
}

// completeWorkflows completes a workflow's name (or, as the command takes
// either, a file).
func completeWorkflows(f *factory) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		files, _ := workflow.LoadFiles(cmp.Or(f.App.Workspace, "."), f.Getenv)
		var out []cobra.Completion
		for _, w := range files {
			if strings.HasPrefix(w.W.Name, toComplete) {
				out = append(out, cobra.CompletionWithDesc(w.W.Name, engine.OneLine(w.W.Description, 60)))
			}
		}
		return out, cobra.ShellCompDirectiveDefault // a file is a workflow too
	}
}

// newHelpCmd is `agentty help [command]`: a command it does not know is
// bad usage, with the nearest, as everywhere else.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil {
				return err
			}
			if len(rest) > 0 {
				return unknownCommand(target, rest[0])
			}
			return target.Help()
		},
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			target, _, err := c.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, sub := range target.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
	}
}
