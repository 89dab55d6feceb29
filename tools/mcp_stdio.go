package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentty/agentty/engine"
)

// stdioTransport runs a stdio MCP server as the go-sdk's CommandTransport
// does, with two differences that keep one misbehaving server from costing
// the person its tools or its story:
//
//   - a line on the server's stdout that is not a JSON-RPC message (a
//     "[dotenv] injecting env" banner, a stray print) is skipped with a
//     warning in the server's log, not taken as the end of the connection,
//     as the official TypeScript client does;
//   - its stderr is kept: the last lines for the error when it fails to
//     start or dies, all of it in the server's log file.
type stdioTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration // how long Close waits after closing stdin
	log       *serverLog
}

var _ mcp.Transport = (*stdioTransport)(nil)

// Connect starts the command, in a process group of its own (Close ends
// the group: a server started through npx or sh leaves no child behind).
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	// The read end of stdout is ours, not exec's: Wait does not close it
	// under the reader, and a grandchild that keeps the write end open
	// cannot keep Wait from returning.
	out, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		out.Close()
		outW.Close()
		return nil, err
	}
	t.cmd.Stdout, t.cmd.Stderr = outW, t.log
	t.cmd.SysProcAttr = childAttr()
	// A grandchild that keeps stderr open must not hold Wait for ever.
	t.cmd.WaitDelay = time.Second
	err = t.cmd.Start()
	outW.Close() // the child has its own
	if err != nil {
		out.Close()
		return nil, err
	}
	pr, pw := io.Pipe()
	exited := make(chan struct{})
	go func() {
		t.cmd.Wait()
		close(exited)
		// What the server wrote before it exited is read; a grandchild
		// holding stdout open does not hold the reader past a second.
		out.SetReadDeadline(time.Now().Add(time.Second))
	}()
	go func() {
		pw.CloseWithError(filterLines(out, pw, t.log))
		out.Close()
	}()
	w := &procWriter{stdin: stdin, cmd: t.cmd, exited: exited, terminate: t.terminate}
	return (&mcp.IOTransport{Reader: pr, Writer: w}).Connect(ctx)
}

// filterLines copies the JSON values on r's lines to w, one line each, and
// skips (with a warning in log) every line that is not one. It returns
// io.EOF when r ends, or why it could not go on.
func filterLines(r io.Reader, w io.Writer, log *serverLog) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), mcp.DefaultMaxLineLength)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if (line[0] != '{' && line[0] != '[') || !json.Valid(line) {
			log.skipped(line)
			continue
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading the server's output: %w", err)
	}
	return io.EOF
}

// procWriter is the server's stdin; closing it ends the server as the
// MCP specification says: stdin closed, then SIGTERM, then SIGKILL.
type procWriter struct {
	stdin     io.WriteCloser
	cmd       *exec.Cmd
	exited    <-chan struct{}
	terminate time.Duration
}

func (p *procWriter) Write(b []byte) (int, error) { return p.stdin.Write(b) }

func (p *procWriter) Close() error {
	p.stdin.Close()
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-p.exited:
			return true
		case <-t.C:
			return false
		}
	}
	// The server first; the rest of its group (what it started) goes
	// with it in any case.
	group := -p.cmd.Process.Pid
	defer syscall.Kill(group, syscall.SIGKILL)
	if wait(p.terminate) {
		return nil
	}
	if syscall.Kill(group, syscall.SIGTERM) == nil && wait(p.terminate) {
		return nil
	}
	syscall.Kill(group, syscall.SIGKILL)
	if !wait(2 * time.Second) {
		return fmt.Errorf("the MCP server %d did not exit", p.cmd.Process.Pid)
	}
	return nil
}

// serverLog keeps what a stdio server writes on stderr, and the lines of
// its stdout that were skipped: the last few lines in memory (for errors),
// everything in a log file when it has one. Safe for concurrent use.
type serverLog struct {
	mu       sync.Mutex // guards the fields below
	file     *os.File   // nil: no log file
	path     string
	partial  []byte   // an unfinished last line of stderr
	last     []string // the last lines of stderr, at most tailLines
	skips    int      // stdout lines that were not JSON-RPC
	firstBad string   // the first of them, cut short
}

const tailLines = 8

// newServerLog opens dir/name.log for appending (0600), or keeps nothing
// but the tail when dir is "" or the file cannot be opened.
func newServerLog(dir, name string) *serverLog {
	l := &serverLog{}
	if dir == "" {
		return l
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return l
	}
	p := filepath.Join(dir, safeFileName(name)+".log")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err == nil {
		l.file, l.path = f, p
		fmt.Fprintf(f, "--- %s: started\n", time.Now().Format(time.RFC3339))
	}
	return l
}

// safeFileName keeps a server's name from naming a path: what is not a
// letter, a digit, - or _ becomes _.
func safeFileName(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
}

// Write takes what the server writes on stderr.
func (l *serverLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file != nil {
		l.file.Write(b)
	}
	l.partial = append(l.partial, b...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.addLine(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) > 4096 { // a line that never ends
		l.addLine(string(l.partial))
		l.partial = l.partial[:0]
	}
	return len(b), nil
}

func (l *serverLog) addLine(s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	l.last = append(l.last, engine.Clip(s, 300))
	if len(l.last) > tailLines {
		l.last = l.last[len(l.last)-tailLines:]
	}
}

// skipped notes a line of stdout that was not JSON-RPC.
func (l *serverLog) skipped(line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.skips++
	if l.skips == 1 {
		l.firstBad = engine.OneLine(string(line), 120)
	}
	if l.file != nil {
		fmt.Fprintf(l.file, "--- skipped a line of stdout that is not JSON-RPC: %s\n", engine.Clip(string(line), 4096))
	}
}

// tail returns the last lines of stderr, joined for an error message;
// "" when the server wrote none.
func (l *serverLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	last := l.last
	if len(l.partial) > 0 {
		last = append(last[:len(last):len(last)], strings.TrimSpace(string(l.partial)))
	}
	return strings.Join(last, " | ")
}

// warning says, once, that lines of stdout were skipped; "" when none were.
func (l *serverLog) warning() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.skips == 0 {
		return ""
	}
	where := ""
	if l.path != "" {
		where = "; all of them are in " + l.path
	}
	return fmt.Sprintf("skipped %d line(s) of its output that are not JSON-RPC, the first: %q%s", l.skips, l.firstBad, where)
}

// explain adds what the server last said on stderr, and where its log is,
// to err.
func (l *serverLog) explain(err error) error {
	if l == nil {
		return err
	}
	t := l.tail()
	if t == "" {
		return err
	}
	where := ""
	if l.path != "" {
		where = " (its log: " + l.path + ")"
	}
	return fmt.Errorf("%w; the server said: %s%s", err, t, where)
}

// Close closes the log file.
func (l *serverLog) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file != nil {
		l.file.Close()
		l.file = nil
	}
}
