package engine

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"
)

// Retry is the backoff policy for model calls and retryable tools: exponential
// with full jitter. The zero value means the defaults: first delay 500 ms,
// factor 2, cap 30 s, at most 5 attempts.
type Retry struct {
	Initial  time.Duration
	Factor   float64
	Max      time.Duration
	Attempts int
}

func (r Retry) withDefaults() Retry {
	if r.Initial <= 0 {
		r.Initial = 500 * time.Millisecond
	}
	if r.Factor < 1 {
		r.Factor = 2
	}
	if r.Max <= 0 {
		r.Max = 30 * time.Second
	}
	if r.Attempts <= 0 {
		r.Attempts = 5
	}
	return r
}

// Delay returns how long to wait before attempt n+1 after n failed attempts
// (n >= 1): a uniform random duration in [0, min(Max, Initial·Factor^(n-1))].
// A Retry-After from the server, when longer, wins.
func (r Retry) Delay(n int, retryAfter time.Duration) time.Duration {
	r = r.withDefaults()
	ceil := float64(r.Initial)
	for i := 1; i < n && ceil < float64(r.Max); i++ {
		ceil *= r.Factor
	}
	ceil = min(ceil, float64(r.Max))
	d := time.Duration(rand.Int64N(int64(ceil) + 1))
	return max(d, retryAfter)
}

// Error is an error that says whether it is worth retrying, and after how
// long. Model and tool implementations return it for failures they can
// classify, such as HTTP statuses.
type Error struct {
	Err        error
	Retryable  bool
	RetryAfter time.Duration
	// Status is an HTTP status, when there was one.
	Status int
}

// Error returns the wrapped error's text.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// Transient marks err as worth retrying, after at least retryAfter.
func Transient(err error, retryAfter time.Duration) error {
	return &Error{Err: err, Retryable: true, RetryAfter: retryAfter}
}

// Permanent marks err as not worth retrying.
func Permanent(err error) error { return &Error{Err: err} }

// IsRetryable reports whether err is worth retrying: an *Error that says so,
// a timeout, or a broken connection. A cancelled context never is.
func IsRetryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Retryable
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

func retryInfo(err error) (after time.Duration, status int) {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter, e.Status
	}
	return 0, 0
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
