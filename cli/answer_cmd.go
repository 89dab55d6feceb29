package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/sessions"
)

// answerOptions are the flags and arguments of agentty answer.
type answerOptions struct {
	*factory
	Wait time.Duration
	Args []string
}

// newAnswerCmd binds the flags of agentty answer.
func newAnswerCmd(f *factory) *cobra.Command {
	opts := &answerOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "answer SESSION TEXT",
		Short: "Answer the question a worker's run of SESSION waits on (ask_user)",
		Example: `  agentty answer 0abc12 "Ada Lovelace"
  agentty answer 0abc12 yes --wait 1m     wait for the question to be asked`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			return exit(answerRun(cmd, opts))
		},
	}
	cmd.Flags().DurationVar(&opts.Wait, "wait", 0, "wait this long for a question to be asked")
	cmd.ValidArgsFunction = firstArg(completeSessions(f))
	return cmd
}

// answerRun sends the answer and says which question it answered.
func answerRun(cmd *cobra.Command, opts *answerOptions) int {
	fail := func(code int, err error) int {
		fmt.Fprintln(opts.Err, "agentty answer:", err)
		return code
	}
	session, text := opts.Args[0], strings.Join(opts.Args[1:], " ")
	if err := sessions.CheckID(session); err != nil {
		return fail(app.ExitUsage, err)
	}
	url := opts.App.NATSURL(opts.Getenv)
	if url == "" {
		return fail(app.ExitUsage, errors.New("no NATS server: pass --nats URL or set AGENTTY_NATS_URL"))
	}
	nc, err := bus.Connect(opts.App.NATSConfig("agentty answer", opts.Getenv))
	if err != nil {
		return fail(codeOf(err), err)
	}
	defer nc.Close()
	signer, err := opts.App.Signer(opts.Getenv, false)
	if err != nil {
		return fail(app.ExitError, err)
	}
	deadline := time.Now().Add(opts.Wait)
	for {
		q, err := bus.SendAnswer(cmd.Context(), nc, session, text, "agentty answer", signer)
		if errors.Is(err, bus.ErrNoQuestion) && time.Now().Before(deadline) && cmd.Context().Err() == nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if errors.Is(err, bus.ErrNoQuestion) {
			err = noQuestionWhy(opts, session, err)
		}
		if err != nil {
			return fail(app.ExitError, fmt.Errorf("session %s: %w", session, err))
		}
		fmt.Fprintf(opts.Out, "answered %q: %s\n", q, text)
		return 0
	}
}

// noQuestionWhy says why no question of session waits: there is no such
// session, or none of its runs is asking (err).
func noQuestionWhy(opts *answerOptions, session string, err error) error {
	store, serr := opts.App.Store(opts.Getenv)
	if serr != nil {
		return err
	}
	defer store.Close()
	if _, merr := store.Meta(session); merr != nil {
		return merr
	}
	return err
}
