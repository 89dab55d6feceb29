package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/sessions"
)

// serveCmd is `agentty serve [--listen HOST:PORT] [--data-dir DIR]`: an
// embedded NATS server with JetStream, its store in the data folder's nats/,
// until ctx ends (Ctrl+C). Its URL is the one line on stdout.
func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("serve", stderr)
	listen := fs.String("listen", bus.DefaultListen, "HOST:PORT to listen on (port 0: a free one)")
	dataDir := fs.String("data-dir", "", "the data folder; JetStream's store is its nats/ (default $AGENTTY_HOME …)")
	workers := fs.Int("workers", 0, "local workers (not yet: the work queue is to come; only 0)")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty serve: "+format+"\n", a...)
		return code
	}
	switch {
	case fs.NArg() > 0:
		return fail(exitUsage, "unexpected %q (usage: agentty serve [--listen HOST:PORT] [--data-dir DIR])", fs.Arg(0))
	case *workers != 0:
		return fail(exitUsage, "--workers %d: workers are not built yet (the work queue comes later); serve carries live events only", *workers)
	}
	home := *dataDir
	if home == "" {
		var err error
		if home, err = sessions.Home(getenv); err != nil {
			return fail(exitError, "%v", err)
		}
	}
	store := filepath.Join(home, "nats")
	if err := os.MkdirAll(store, 0o700); err != nil {
		return fail(exitError, "the JetStream store: %v", err)
	}
	srv, err := bus.StartServer(bus.ServerConfig{Listen: *listen, StoreDir: store})
	if err != nil {
		return fail(exitError, "%v", err)
	}
	if host, _, err := net.SplitHostPort(*listen); err == nil && !loopback(host) {
		fmt.Fprintf(stderr, "agentty serve: warning: listening on %s with no authentication: whoever reaches it can read every event and publish; put a NATS server with accounts in front for anything beyond this machine\n", *listen)
	}
	fmt.Fprintf(stderr, "agentty serve: NATS with JetStream, its store in %s (synced on every write); Ctrl+C stops it\n", store)
	fmt.Fprintln(stdout, srv.URL())
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
