package bus

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// DefaultListen is where `agentty serve` listens unless told otherwise.
const DefaultListen = "127.0.0.1:4222"

// ServerConfig says how to run an embedded NATS server.
type ServerConfig struct {
	// Listen is HOST:PORT; port 0 picks a free one. "" is DefaultListen.
	Listen string
	// StoreDir is JetStream's store; it is made if missing.
	StoreDir string
	// Log, when set, receives the server's notices, warnings and errors,
	// one line each; nil keeps them quiet (errors that stop the server
	// are returned by StartServer all the same).
	Log io.Writer
	// StartTimeout bounds the wait for the server to accept connections
	// (default 10 s).
	StartTimeout time.Duration
	// Users, when set, are the only clients let in.
	Users *Users
}

// Server is an embedded nats-server with JetStream, its store synced on
// every write: one node has no replicas to trust with what a crash would
// lose (JetStream's default syncs every two minutes).
type Server struct {
	ns   *server.Server
	log  *serverLog
	lock *os.File // the store's lock, held until Shutdown
}

// StartServer starts a server and waits until it accepts connections. It
// installs no signal handlers: the caller stops it with Shutdown.
func StartServer(cfg ServerConfig) (*Server, error) {
	listen := cfg.Listen
	if listen == "" {
		listen = DefaultListen
	}
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("nats-server: --listen %q: want HOST:PORT (%v)", listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("nats-server: --listen %q: the port must be a number from 0 to 65535", listen)
	}
	if port == 0 {
		port = server.RANDOM_PORT // nats-server reads 0 as its default port
	}
	if cfg.StoreDir == "" {
		return nil, errors.New("nats-server: no store folder for JetStream")
	}
	// nats-server does not stop a second server from opening the same
	// store, and two would corrupt it: a lock file says whose it is.
	if err := os.MkdirAll(cfg.StoreDir, 0o700); err != nil {
		return nil, fmt.Errorf("nats-server: the store: %w", err)
	}
	lock, err := lockStore(cfg.StoreDir)
	if err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			lock.Close()
		}
	}()
	opts := &server.Options{
		ServerName:             "agentty",
		Host:                   host,
		Port:                   port,
		JetStream:              true,
		StoreDir:               cfg.StoreDir,
		SyncAlways:             true,
		NoSigs:                 true,
		DisableJetStreamBanner: true,
		Users:                  serverUsers(cfg.Users),
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("nats-server: %w", err)
	}
	lg := &serverLog{w: cfg.Log, fatal: make(chan string, 1)}
	ns.SetLoggerV2(lg, false, false, false)
	go ns.Start()
	wait := cfg.StartTimeout
	if wait <= 0 {
		wait = 10 * time.Second
	}
	deadline := time.Now().Add(wait)
	for !ns.ReadyForConnections(50 * time.Millisecond) {
		select {
		case why := <-lg.fatal:
			ns.Shutdown()
			return nil, fmt.Errorf("nats-server on %s: %s", listen, why)
		default:
		}
		if time.Now().After(deadline) {
			ns.Shutdown()
			return nil, fmt.Errorf("nats-server on %s: not accepting connections after %v", listen, wait)
		}
	}
	if !ns.JetStreamEnabled() {
		ns.Shutdown()
		return nil, fmt.Errorf("nats-server: JetStream did not start (store %s)", cfg.StoreDir)
	}
	started = true
	return &Server{ns: ns, log: lg, lock: lock}, nil
}

// lockStore takes the store's lock, without waiting; the kernel lets go
// of it if the process dies.
func lockStore(dir string) (*os.File, error) {
	path := filepath.Join(dir, "agentty.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("nats-server: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("nats-server: the store %s is in use by another server (an agentty serve?)", dir)
		}
		return nil, fmt.Errorf("nats-server: lock %s: %w", path, err)
	}
	return f, nil
}

// URL is the URL clients connect to, nats://HOST:PORT with the port it
// listens on.
func (s *Server) URL() string { return s.ns.ClientURL() }

// NATS is the nats-server itself, for what this type does not wrap
// (monitoring figures, in tests).
func (s *Server) NATS() *server.Server { return s.ns }

// Shutdown closes every connection, stops JetStream (its store synced) and
// returns when the server has stopped.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	s.lock.Close()
}

// serverLog is nats-server's logger: lines to w, and the fatal error that
// stops the server (which must not exit the process) to fatal.
type serverLog struct {
	mu    sync.Mutex // guards w
	w     io.Writer
	fatal chan string
}

func (l *serverLog) line(level, format string, v []any) {
	if l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "nats-server: %s%s\n", level, fmt.Sprintf(format, v...))
}

func (l *serverLog) Noticef(format string, v ...any) { l.line("", format, v) }
func (l *serverLog) Warnf(format string, v ...any)   { l.line("warning: ", format, v) }
func (l *serverLog) Errorf(format string, v ...any)  { l.line("error: ", format, v) }
func (l *serverLog) Debugf(string, ...any)           {}
func (l *serverLog) Tracef(string, ...any)           {}

func (l *serverLog) Fatalf(format string, v ...any) {
	l.line("fatal: ", format, v)
	select {
	case l.fatal <- fmt.Sprintf(format, v...):
	default:
	}
}

// MapPartitions gives the server's account l's subject mappings
// (Layout.Mappings): a client that publishes a session's documented
// subjects lands in its partition.
func (s *Server) MapPartitions(l Layout) error {
	for src, dst := range l.Mappings() {
		if err := s.ns.GlobalAccount().AddMapping(src, dst); err != nil {
			return fmt.Errorf("nats-server: map %s to %s: %w", src, dst, err)
		}
	}
	return nil
}
