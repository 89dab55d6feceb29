package gates

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/agentty/agentty/engine"
)

// Asker asks the person a run's questions in a headless run: on a
// terminal, the question on stderr and the answer a line of standard
// input; otherwise (a pipe, --json) one JSON line of standard input,
// {"answer": "…"}, after the question_asked event. Standard input that is
// closed answers at once with an error: a run never hangs on it.
type Asker struct {
	mu       sync.Mutex
	in       *bufio.Reader
	out      io.Writer
	terminal bool
}

// NewAsker asks on out and reads in; terminal says in is a person's.
func NewAsker(in io.Reader, out io.Writer, terminal bool) *Asker {
	return &Asker{in: bufio.NewReader(in), out: out, terminal: terminal}
}

// Ask asks q and returns the answer.
func (a *Asker) Ask(ctx context.Context, q *engine.Question) (engine.Verdict, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.terminal {
		fmt.Fprintf(a.out, "agentty run: the run asks %q; answer with one line on standard input: {\"answer\": \"…\"}\n", q.Question)
	}
	if a.terminal {
		fmt.Fprintf(a.out, "agentty asks: %s\n", q.Question)
		for i, c := range q.Choices {
			fmt.Fprintf(a.out, "  %d. %s\n", i+1, c)
		}
		if q.Default != "" {
			fmt.Fprintf(a.out, "(Enter: %s) ", q.Default)
		}
		fmt.Fprint(a.out, "> ")
	}
	line, err := a.readLine(ctx)
	if a.terminal && (err != nil || !strings.HasSuffix(line, "\n")) {
		fmt.Fprintln(a.out) // the prompt's line ends before what follows
	}
	if err != nil {
		return engine.Verdict{}, err
	}
	answer := strings.TrimSpace(line)
	if !a.terminal {
		var msg struct {
			Answer *string `json:"answer"`
		}
		if err := json.Unmarshal([]byte(answer), &msg); err != nil || msg.Answer == nil {
			return engine.Verdict{}, fmt.Errorf("the answer on standard input is not {\"answer\": …}: %q", engine.Clip(answer, 80))
		}
		answer = *msg.Answer
	}
	if n, err := strconv.Atoi(answer); err == nil && n >= 1 && n <= len(q.Choices) && a.terminal {
		answer = q.Choices[n-1] // a choice by its number
	}
	if answer == "" {
		answer = q.Default
	}
	if answer == "" {
		return engine.Verdict{Action: engine.Deny}, nil // nothing answered
	}
	by := "standard input"
	if a.terminal {
		by = "the terminal"
	}
	return engine.Verdict{Action: engine.Proceed, Answer: answer, By: by}, nil
}

// readLine reads a line of standard input, or gives up when ctx ends (the
// read goes on, and its line is lost).
func (a *Asker) readLine(ctx context.Context) (string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		l, err := boundedLine(a.in, MaxAnswerLine)
		ch <- result{l, err}
	}()
	select {
	case r := <-ch:
		if errors.Is(r.err, errLongLine) {
			return "", r.err
		}
		if r.err != nil && (r.line == "" || !errors.Is(r.err, io.EOF)) {
			return "", errors.New("standard input is closed: nobody can answer (give the answers with --answers FILE)")
		}
		return r.line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// MaxAnswerLine bounds one line of standard input in the headless
// protocol (an answer, a pause's verdict with an edited request): the rest
// of a longer one is read and dropped, and the answer is an error.
const MaxAnswerLine = 16 << 20

var errLongLine = fmt.Errorf("a line of standard input is longer than %d bytes: not taken as an answer", MaxAnswerLine)

// boundedLine reads a line of r (its newline included) of at most max
// bytes; a longer one is read to its end and dropped (errLongLine), so
// the next line is the next answer.
func boundedLine(r *bufio.Reader, max int) (string, error) {
	var b []byte
	long := false
	for {
		part, err := r.ReadSlice('\n')
		if !long && len(b)+len(part) > max {
			long, b = true, nil
		}
		if !long {
			b = append(b, part...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long {
			return "", errLongLine
		}
		return string(b), err
	}
}
