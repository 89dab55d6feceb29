package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentty/agentty/engine"
)

// streamErr is an error the server reported inside a stream.
type streamErr struct {
	msg, typ string
	code     any
}

func (e *streamErr) Error() string {
	return fmt.Sprintf("the server reported an error mid-stream: %s", e.msg)
}

// status returns the HTTP-like status in the error's code, if any.
func (e *streamErr) status() int {
	switch c := e.code.(type) {
	case float64:
		return int(c)
	case string:
		n, _ := strconv.Atoi(c)
		return n
	}
	return 0
}

// classify turns an error into one line that names the status and the
// server's message, marked retryable or not, with the key taken out.
func (m *Model) classify(err error, info *respInfo) error {
	after, _ := info.get()
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	var se *streamErr
	status, msg := 0, ""
	switch {
	case errors.Is(err, errTooLarge) || info.large():
		return m.permanent(fmt.Errorf("the answer passed the cap of %d bytes (text, reasoning and tool-call arguments together); the decision ends here", m.cfg.MaxAnswerBytes), 0)
	case errors.As(err, &apiErr):
		status, msg = apiErr.HTTPStatusCode, apiErr.Message
		if status == 0 { // an error object inside the stream
			return m.transient(fmt.Errorf("the server reported an error mid-stream: %s", msg), after, 0)
		}
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
		msg = strings.TrimSpace(string(reqErr.Body))
		if msg == "" && reqErr.Err != nil {
			msg = reqErr.Err.Error()
		}
	case errors.As(err, &se):
		if s := se.status(); s >= 400 && s < 500 && s != 408 && s != 409 && s != 429 {
			return m.permanent(fmt.Errorf("the server refused the request mid-stream (%d): %s", s, se.msg), s)
		}
		return m.transient(se, after, se.status())
	case info.stalled():
		return m.transient(fmt.Errorf("the server sent nothing for %s", m.cfg.StallTimeout), 0, 0)
	case errors.Is(err, context.DeadlineExceeded):
		return m.transient(fmt.Errorf("the request took longer than %s", m.cfg.Timeout), 0, 0)
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, goopenai.ErrTooManyEmptyStreamMessages):
		return m.transient(errors.New("the server sent too many empty stream lines"), 0, 0)
	default:
		if engine.IsRetryable(err) || errors.Is(err, io.EOF) {
			return m.transient(fmt.Errorf("connection: %w", err), after, 0)
		}
		return m.permanent(err, 0)
	}
	line := fmt.Sprintf("%s (HTTP %d): %s", statusWords(status), status, engine.OneLine(msg, maxErrorRunes))
	if status == 408 || status == 409 || status == 429 || status >= 500 {
		return m.transient(errors.New(line), after, status)
	}
	return m.permanent(errors.New(line), status)
}

func statusWords(status int) string {
	switch status {
	case 400:
		return "the server rejected the request"
	case 401:
		return "authentication failed: check OPENAI_API_KEY"
	case 403:
		return "permission denied"
	case 404:
		return "not found: check the model name and --base-url"
	case 408:
		return "request timed out"
	case 409:
		return "conflict"
	case 429:
		return "rate limited"
	}
	if status >= 500 {
		return "server error"
	}
	return "HTTP error"
}

// maxErrorRunes bounds the server's words quoted in an error.
const maxErrorRunes = 300

func (m *Model) redact(err error) error {
	if m.cfg.APIKey == "" || !strings.Contains(err.Error(), m.cfg.APIKey) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), m.cfg.APIKey, "[redacted]"))
}

func (m *Model) transient(err error, after time.Duration, status int) error {
	return &engine.Error{Err: m.redact(err), Retryable: true, RetryAfter: after, Status: status}
}

func (m *Model) permanent(err error, status int) error {
	return &engine.Error{Err: m.redact(err), Status: status}
}

// refusedStreamOptions reports a 400 that blames stream_options.
func refusedStreamOptions(err error) bool {
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	switch {
	case errors.As(err, &apiErr):
		return apiErr.HTTPStatusCode/100 == 4 && strings.Contains(apiErr.Message, "stream_options")
	case errors.As(err, &reqErr):
		return reqErr.HTTPStatusCode/100 == 4 && strings.Contains(string(reqErr.Body), "stream_options")
	}
	return false
}
