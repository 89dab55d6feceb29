package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/worker"
	"github.com/nats-io/nats.go"
)

// serveOptions are the flags and arguments of agentty serve.
type serveOptions struct {
	*factory
	Queue   worker.QueueConfig
	Listen  string
	Workers int
	// Partitions is K (queue setup's --partitions); 0 keeps the data
	// folder's.
	Partitions int
	Args       []string
}

// newServeCmd binds the flags of its command into its options.
func newServeCmd(f *factory) *cobra.Command {
	opts := &serveOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "serve [--listen HOST:PORT] [--workers N]",
		Short: "Run a NATS server with JetStream and N workers; Ctrl+C drains them",
		Example: `  agentty serve
  agentty serve --listen 0.0.0.0:4222 --workers 0    workers run elsewhere`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			withRunFlags(cmd, f.App)
			return exit(serveRun(cmd.Context(), opts))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Listen, "listen", bus.DefaultListen, "HOST:PORT to listen on (port 0: a free one)")
	addRunFlags(fs, f.App)
	registerQueue(&opts.Queue, fs, -1)
	fs.IntVar(&opts.Partitions, "partitions", 0, "the journal and the run queue in K partitions (0: as the data folder has them, 1 for a new one); fixed once runs are there")
	fs.IntVar(&opts.Workers, "workers", runtime.NumCPU(), "runs at once by the server's own worker (0: none; workers elsewhere take the runs)")
	fs.BoolVar(&f.App.Yes, "yes", false, "the workers approve tools that ask")
	return cmd
}

// serveRun is `agentty serve [--listen HOST:PORT] [--data-dir DIR]`: an
// embedded NATS server with JetStream, its store in the data folder's nats/,
// until ctx ends (Ctrl+C). Its URL is the one line on stdout.
func serveRun(ctx context.Context, opts *serveOptions) int {
	q := opts.Queue
	o := *opts.App
	stdout, stderr, getenv := opts.Out, opts.Err, opts.Getenv
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty serve: "+format+"\n", a...)
		return code
	}
	switch {
	case len(opts.Args) > 0:
		return fail(app.ExitUsage, "unexpected %q (usage: agentty serve [--listen HOST:PORT] [--workers N] [--data-dir DIR])", arg(opts.Args, 0))
	case o.NATS != "":
		return fail(app.ExitUsage, "--nats: serve is the NATS server (its URL is the one it prints)")
	case opts.Workers < 0:
		return fail(app.ExitUsage, "--workers %d: want 0 or more", opts.Workers)
	}
	home := o.DataDir
	if home == "" {
		var err error
		if home, err = sessions.Home(getenv); err != nil {
			return fail(app.ExitError, "%v", err)
		}
	}
	store := filepath.Join(home, "nats")
	if err := os.MkdirAll(store, 0o700); err != nil {
		return fail(app.ExitError, "the JetStream store: %v", err)
	}
	users, made, err := bus.LoadOrMakeUsers(store)
	if err != nil {
		return fail(app.ExitError, "the users: %v", err)
	}
	srv, err := bus.StartServer(bus.ServerConfig{Listen: opts.Listen, StoreDir: store, Users: &users})
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	if err := bus.RecordURL(store, srv.URL()); err != nil {
		srv.Shutdown()
		return fail(app.ExitError, "the users: %v", err)
	}
	layout, err := serveSetup(ctx, srv.URL(), users.Operator, home, opts.Partitions)
	if err == nil {
		err = srv.MapPartitions(layout)
	}
	if err != nil {
		srv.Shutdown()
		return fail(app.ExitError, "%v", err)
	}
	verb := "uses"
	if made {
		verb = "made"
	}
	fmt.Fprintf(stderr, "agentty serve: clients need a user: it %s them in %s (0600); commands on this data folder use them, others give them in the URL (nats://USER:PASSWORD@HOST:PORT)\n", verb, filepath.Join(store, bus.UsersFile))
	if host, _, err := net.SplitHostPort(opts.Listen); err == nil && !loopback(host) {
		fmt.Fprintf(stderr, "agentty serve: warning: listening on %s without TLS: the password crosses the network in the clear; put a NATS server with TLS in front for anything beyond this machine\n", opts.Listen)
	}
	fmt.Fprintf(stderr, "agentty serve: NATS with JetStream, its store in %s (synced on every write); Ctrl+C stops it\n", store)
	fmt.Fprintln(stdout, srv.URL())
	if opts.Workers > 0 {
		q.Concurrency = opts.Workers
		o.DataDir = home
		code, err := worker.Run(ctx, o, q, srv.URL(), getenv, func(format string, a ...any) {
			fmt.Fprintf(stderr, "agentty serve: worker: "+format+"\n", a...)
		})
		if err != nil {
			srv.Shutdown()
			return fail(code, "worker: %v", err)
		}
	}
	<-ctx.Done()
	srv.Shutdown()
	fmt.Fprintln(stderr, "agentty serve: stopped")
	return 0
}

// serveSetup makes agentty's streams and buckets on the server serve
// started (one node: one copy each) and puts the operator's steering key,
// the data folder's, in the config bucket: the workers take answers to any
// run's pauses signed with it.
func serveSetup(ctx context.Context, url string, op bus.Credential, home string, partitions int) (bus.Layout, error) {
	nc, err := nats.Connect(url, nats.UserInfo(op.User, op.Password), nats.Name("agentty serve"))
	if err != nil {
		return bus.Layout{}, err
	}
	defer nc.Close()
	signer, err := bus.LoadOrMakeSigner(home)
	if err != nil {
		return bus.Layout{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return bus.SetupWith(ctx, nc, bus.Settings{Replicas: 1, Partitions: partitions}, signer)
}

// loopback reports whether host names this machine only.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
