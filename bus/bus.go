// Package bus puts agentty's event stream on NATS: a Sink that publishes
// every event of a run on agentty.events.<session>.<run>.<kind> over core
// NATS, the subjects a watcher subscribes to, and an embedded nats-server
// with JetStream for `agentty serve` and for tests; and Journals, the
// sessions kept in JetStream (journal.go).
//
// The journal stays the truth. The Sink goes after the journal in
// engine.Sinks, so an event is published only once it is written; publishing
// never blocks a run on a watcher (core NATS drops for a slow subscriber,
// the server's problem, not the publisher's) and never fails one: what could
// not be published is counted and told once, as a notice.
//
// It imports engine, sessions (for Journals) and the NATS client and
// server only.
package bus

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentty/agentty/engine"
	"github.com/nats-io/nats.go"
)

// Prefix is the first two tokens of every event subject.
const Prefix = "agentty.events"

// Subject is the subject ev is published on:
// agentty.events.<session>.<run>.<kind>, each token made valid by Token.
func Subject(ev engine.Event) string {
	return Prefix + "." + Token(ev.Session) + "." + Token(ev.Run) + "." + Token(string(ev.Kind))
}

// appendSubject appends Subject(ev) to b without allocating for tokens that
// need no change.
func appendSubject(b []byte, ev engine.Event) []byte {
	b = append(b, Prefix...)
	for _, t := range [...]string{ev.Session, ev.Run, string(ev.Kind)} {
		b = append(b, '.')
		b = appendToken(b, t)
	}
	return b
}

// Filter is the subject that matches every event of session, or of every
// session when session is "".
func Filter(session string) string {
	if session == "" {
		return Prefix + ".>"
	}
	return Prefix + "." + Token(session) + ".>"
}

// Token makes s one valid subject token: '.', '*', '>', white space and
// control characters become '_', and "" becomes "_". A run id such as
// run-1/3/call_0 is kept as it is; a model's tool call id can hold anything.
func Token(s string) string {
	if s == "" {
		return "_"
	}
	if len(s) > maxToken {
		return string(appendToken(nil, s))
	}
	for _, r := range s {
		if badRune(r) {
			return string(appendToken(nil, s))
		}
	}
	return s
}

// maxToken bounds a token: a run id holds a model's tool call ids, of any
// length, and a subject past the server's limit (4 KiB) would have it drop
// the connection, and with it every later event. A longer token keeps its
// first bytes and ends with a hash of the whole.
const maxToken = 200

func appendToken(b []byte, s string) []byte {
	if s == "" {
		return append(b, '_')
	}
	if len(s) > maxToken {
		h := fnv.New64a()
		h.Write([]byte(s))
		b = appendToken(b, strings.ToValidUTF8(s[:maxToken-17], ""))
		return fmt.Appendf(b, "~%016x", h.Sum64())
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if badRune(r) {
			b = append(b, '_')
		} else {
			b = append(b, s[i:i+n]...) // an invalid byte is kept as it is
		}
		i += n
	}
	return b
}

// badRune reports whether r cannot be part of a token.
func badRune(r rune) bool {
	if r < 0x80 {
		return badByte(byte(r))
	}
	return isSpace(r)
}

// badByte reports whether an ASCII byte cannot be part of a token.
func badByte(c byte) bool {
	return c <= ' ' || c == 0x7f || c == '.' || c == '*' || c == '>'
}

// isSpace reports the non-ASCII runes unicode calls white space.
func isSpace(r rune) bool {
	switch r {
	case '\u0085', '\u00a0', '\u1680', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000':
		return true
	}
	return r >= '\u2000' && r <= '\u200a'
}

// Config names a NATS server and how to reach it. Its zero value connects
// nowhere.
type Config struct {
	// URL is one server, or several separated by commas: nats://HOST:PORT,
	// tls://HOST:PORT (TLS with the system's roots), user:password@ in the
	// URL when the server wants them.
	URL string
	// Creds is a credentials file (a user JWT and its NKey seed), as the
	// nats tool writes them.
	Creds string
	// Name is the connection's name, shown by the server's monitoring.
	Name string
	// UsersFile is where agentty serve keeps the users it requires, on
	// this machine (a data folder's nats/users.json): its operator is used
	// when the URL names no user and Creds is not given.
	UsersFile string
}

// Connect connects to the server cfg names. The connection reconnects
// forever, holding what is published meanwhile (up to 8 MB), so a server
// restarted under a long session loses nothing that fits.
//
// A missing or unreadable credentials file is a UsageError; a server that
// cannot be reached, or refuses the credentials, is an ordinary error.
// Errors name the server with any password taken out.
func Connect(cfg Config, opts ...nats.Option) (*nats.Conn, error) {
	if cfg.URL == "" {
		return nil, UsageError{errors.New("nats: no server URL")}
	}
	all := []nats.Option{
		// A permissions violation is said by the operation it stops
		// (DeniedError), not printed raw by the client on its own.
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if !errors.Is(err, nats.ErrPermissionViolation) {
				fmt.Fprintf(os.Stderr, "nats: %v\n", err)
			}
		}),
		nats.Name(cfg.Name),
		nats.MaxReconnects(-1),
		nats.Timeout(5 * time.Second),
		// A server that stops reading (hung, or a network that drops
		// packets silently) would hold a publish for the client's default
		// minute; after 2 s the connection is dropped and reconnected, and
		// what is published meanwhile waits in the reconnect buffer.
		nats.FlusherTimeout(2 * time.Second),
	}
	if cfg.Creds != "" {
		if _, err := os.Stat(cfg.Creds); err != nil {
			return nil, UsageError{fmt.Errorf("nats: --nats-creds %s: %w", cfg.Creds, err)}
		}
		all = append(all, nats.UserCredentials(cfg.Creds))
	}
	u, err := withUsersFile(cfg)
	if err != nil {
		return nil, UsageError{err}
	}
	nc, err := nats.Connect(u, append(all, opts...)...)
	if errors.Is(err, nats.ErrAuthorization) {
		return nil, fmt.Errorf("nats: connect to %s: %w: the server wants a user it knows: give one in the URL (nats://USER:PASSWORD@HOST:PORT; agentty serve keeps its users in its data folder's nats/users.json) or --nats-creds FILE", Redact(cfg.URL), err)
	}
	if errors.Is(err, nats.ErrNoServers) {
		return nil, fmt.Errorf("nats: connect to %s: %w: nothing answers there; start a server with agentty serve, or give the one to use with --nats", Redact(cfg.URL), err)
	}
	if err != nil {
		return nil, fmt.Errorf("nats: connect to %s: %w", Redact(cfg.URL), err)
	}
	return nc, nil
}

// UsageError is a connection setting that is wrong before any server is
// asked.
type UsageError struct{ error }

func (e UsageError) Unwrap() error { return e.error }

// Redact returns a server list with the passwords and tokens of its URLs
// left out, for messages.
func Redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		if err != nil || u.User == nil {
			continue
		}
		u.User = url.User("REDACTED")
		parts[i] = u.String()
	}
	return strings.Join(parts, ",")
}

// Sink publishes every event it is given on Subject(ev), its payload the
// event's JSON (engine.Event.AppendJSON). Put it after the journal in
// engine.Sinks: it is told of an event only once the journal has written it.
//
// Emit never fails and never waits for a subscriber: an event that cannot
// be published (the connection closed, its outgoing buffer full while it
// reconnects, a permission refused by the server) is counted, and Err says
// so once. A Sink is safe for concurrent use; one connection may carry the
// events of many runs.
type Sink struct {
	nc *nats.Conn

	mu     sync.Mutex // guards the fields below
	subj   []byte
	buf    []byte
	failed int   // events not published
	first  error // why the first of them was not
	async  error // the first error the server reported asynchronously
}

var _ engine.Sink = (*Sink)(nil)

// NewSink returns a Sink publishing on nc. It takes over nc's asynchronous
// error handler, to hear of permissions the server refuses.
func NewSink(nc *nats.Conn) *Sink {
	s := &Sink{nc: nc}
	nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		s.mu.Lock()
		if s.async == nil {
			s.async = err
		}
		s.mu.Unlock()
	})
	return s
}

// Emit publishes ev. It returns nil whatever happens: a run is never failed
// by its watchers' bus.
func (s *Sink) Emit(ev engine.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	s.buf, err = ev.AppendJSON(s.buf[:0])
	if err == nil {
		s.subj = appendSubject(s.subj[:0], ev)
		// Publish copies the payload into the connection's buffer.
		err = s.nc.Publish(string(s.subj), s.buf)
	}
	if err != nil {
		s.failed++
		if s.first == nil {
			s.first = fmt.Errorf("%s %s: %w", ev.Run, ev.Kind, err)
		}
	}
	return nil
}

// Err says what went wrong in publishing, or nil: how many events were not
// published and why the first was not, or the first error the server
// reported. It is one notice, for the end of a run or session.
func (s *Sink) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.failed > 0:
		return fmt.Errorf("nats: %d event(s) were not published (the journal has them), the first: %w", s.failed, s.first)
	case s.async != nil:
		return fmt.Errorf("nats: the server reported: %w (some events may not have been published; the journal has them)", s.async)
	}
	return nil
}

// Close sends what is still buffered, waiting at most wait for the server
// to have it. It returns Err, or why the last events may not have been
// sent. It never closes the connection: that is its opener's, and other
// sinks, runs and the worker's own queue may share it.
func (s *Sink) Close(wait time.Duration) error {
	var flushErr error
	if s.nc.IsConnected() {
		flushErr = s.nc.FlushTimeout(wait)
	} else if n, _ := s.nc.Buffered(); n > 0 {
		flushErr = errors.New("not connected")
	}
	if err := s.Err(); err != nil {
		return err
	}
	if flushErr != nil {
		return fmt.Errorf("nats: the last events may not have been published (%v); the journal has them", flushErr)
	}
	return nil
}
