package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/sessions"
)

// newQueueUsersCmd is `agentty queue users`: the users agentty serve
// requires, and their roles, as nats-server config for a cluster's nodes.
func newQueueUsersCmd(f *factory) *cobra.Command {
	var partitions int
	cmd := &cobra.Command{
		Use:   "users",
		Short: "Print agentty's users and their roles as nats-server config, for a cluster's nodes to include",
		Long: `Print the users agentty serve requires (this data folder's nats/users.json, made when
missing) with each role's permissions, as a nats-server authorization block. Include it
in every node's config: clients then need a user, and each role may do only its work.`,
		Example: `  (umask 077; agentty queue users > agentty-users.conf)
  # in each node's nats-server config:  include ./agentty-users.conf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit(queueUsersRun(f, partitions))
		},
	}
	cmd.Flags().IntVar(&partitions, "partitions", 1, "add the subject mappings of K partitions (queue setup's --partitions), for clients that publish the documented subjects")
	return cmd
}

// queueUsersRun prints the users config of the data folder's users.
func queueUsersRun(f *factory, partitions int) int {
	if partitions < 1 || partitions > bus.MaxPartitions {
		fmt.Fprintf(f.Err, "agentty queue users: --partitions %d: want 1 to %d\n", partitions, bus.MaxPartitions)
		return app.ExitUsage
	}
	home := f.App.DataDir
	if home == "" {
		var err error
		if home, err = sessions.Home(f.Getenv); err != nil {
			fmt.Fprintln(f.Err, "agentty queue users:", err)
			return app.ExitError
		}
	}
	dir := filepath.Join(home, "nats")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		fmt.Fprintln(f.Err, "agentty queue users:", err)
		return app.ExitError
	}
	users, made, err := bus.LoadOrMakeUsers(dir)
	if err != nil {
		fmt.Fprintln(f.Err, "agentty queue users:", err)
		return app.ExitError
	}
	fmt.Fprint(f.Out, bus.UsersConfig(users))
	fmt.Fprint(f.Out, bus.MappingsConfig(bus.Layout{K: partitions}))
	verb := "from"
	if made {
		verb = "made in"
	}
	fmt.Fprintf(f.Err, "agentty queue users: the users %s %s; give the others theirs in the URL (nats://agentty-submit:PASSWORD@HOST:4222)\n", verb, filepath.Join(dir, bus.UsersFile))
	return 0
}
