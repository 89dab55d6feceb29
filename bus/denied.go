package bus

import (
	"errors"
	"strings"

	"github.com/nats-io/nats.go"
)

// A publish the server refuses (the user's permissions) is not answered:
// the server says so on the connection, and a request waits for its
// timeout, and a retry for all its tries. Permissions do not change while a
// connection lasts, so the operations that publish where a role may not
// ask whether the connection was refused there, and stop with why.

// DeniedError is an operation stopped because the NATS user may not
// publish where it would.
type DeniedError struct {
	What  string // what was tried, in words
	Cause error  // the server's permissions violation
}

func (e *DeniedError) Error() string {
	return "this NATS user may not " + e.What + " (" + e.Cause.Error() + "); the operator may: see the role table in docs/scale-out.md"
}

func (e *DeniedError) Unwrap() error { return e.Cause }

// denied is a DeniedError when the last error nc heard is the server's
// refusal of a publish on a subject that starts with prefix; nil otherwise.
func denied(nc *nats.Conn, prefix, what string) error {
	if nc == nil {
		return nil
	}
	le := nc.LastError()
	if le == nil || !errors.Is(le, nats.ErrPermissionViolation) || !strings.Contains(le.Error(), `Publish to "`+prefix) {
		return nil
	}
	return &DeniedError{What: what, Cause: le}
}

// MayPublish says, by trying, whether nc's user may publish on subject: a
// DeniedError naming what as what it may not do when the server refuses.
// subject must be one where an empty message does nothing (an ack subject
// of no message).
func MayPublish(nc *nats.Conn, subject, what string) error {
	if err := nc.Publish(subject, nil); err != nil {
		return err
	}
	if err := nc.Flush(); err != nil { // the server's refusal comes before its answer to the ping
		return err
	}
	return denied(nc, subject, what)
}
