package app

// Whether a workspace's risky settings take effect: recorded trust, the
// person's answer, or a notice of what was ignored.

import (
	"errors"

	"github.com/agentty/agentty/config"
)

// trustChoice is the person's answer about an untrusted workspace config.
type trustChoice int

const (
	trustIgnore trustChoice = iota // continue without its risky keys
	trustRecord                    // trust the folder (recorded)
	trustQuit                      // start nothing
)

// ErrQuit is the person's choice not to start in an untrusted folder.
var ErrQuit = errors.New("not started: the folder is not trusted")

// DecideTrust says whether w's risky keys take effect, and when they do not,
// the notice that says so. It asks through o.AskTrust when that is set.
func DecideTrust(o Options, w *config.Workspace, getenv func(string) string) (bool, string, error) {
	if len(w.Risky) == 0 {
		return false, "", nil // its safe part is all of it
	}
	if o.TrustWorkspace {
		return true, "", nil
	}
	store, err := config.LoadTrust(getenv)
	if err != nil {
		return false, "", err
	}
	if store.Holds(w) {
		return true, "", nil
	}
	changed := store.Changes(w)
	if o.AskTrust != nil {
		choice, err := o.AskTrust(w, changed)
		if err != nil {
			return false, "", err
		}
		switch choice {
		case trustRecord:
			if err := store.Trust(w.Dir, w); err != nil {
				return false, "", err
			}
			return true, "", nil
		case trustQuit:
			return false, "", ErrQuit
		}
	}
	return false, config.IgnoredNotice(w, changed), nil
}
