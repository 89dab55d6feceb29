package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/sessions"
)

// serveCmd is `agentty serve [--listen HOST:PORT] [--data-dir DIR]`: an
// embedded NATS server with JetStream, its store in the data folder's nats/,
// until ctx ends (Ctrl+C). Its URL is the one line on stdout.
func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("serve", stderr)
	listen := fs.String("listen", bus.DefaultListen, "HOST:PORT to listen on (port 0: a free one)")
	var o app.Options
	register(&o, fs)
	var q app.QueueConfig
	registerQueue(&q, fs, -1)
	workers := fs.Int("workers", runtime.NumCPU(), "runs at once by the server's own worker (0: none; workers elsewhere take the runs)")
	fs.BoolVar(&o.Yes, "yes", false, "the workers approve tools that ask")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty serve: "+format+"\n", a...)
		return code
	}
	switch {
	case fs.NArg() > 0:
		return fail(app.ExitUsage, "unexpected %q (usage: agentty serve [--listen HOST:PORT] [--workers N] [--data-dir DIR])", fs.Arg(0))
	case o.NATS != "":
		return fail(app.ExitUsage, "--nats: serve is the NATS server (its URL is the one it prints)")
	case *workers < 0:
		return fail(app.ExitUsage, "--workers %d: want 0 or more", *workers)
	}
	o.MaxStepsSet = flagSet(fs, "max-steps")
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
	srv, err := bus.StartServer(bus.ServerConfig{Listen: *listen, StoreDir: store})
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	if host, _, err := net.SplitHostPort(*listen); err == nil && !loopback(host) {
		fmt.Fprintf(stderr, "agentty serve: warning: listening on %s with no authentication: whoever reaches it can read every event and publish; put a NATS server with accounts in front for anything beyond this machine\n", *listen)
	}
	fmt.Fprintf(stderr, "agentty serve: NATS with JetStream, its store in %s (synced on every write); Ctrl+C stops it\n", store)
	fmt.Fprintln(stdout, srv.URL())
	if *workers > 0 {
		q.Concurrency = *workers
		o.DataDir = home
		code, err := app.RunWorker(ctx, o, q, srv.URL(), getenv, func(format string, a ...any) {
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

// loopback reports whether host names this machine only.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
