package console

import (
	"context"
	"strings"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/ui"
)

var _ ui.CustomCommands = (*backend)(nil)

// CustomCommands lists the setup's custom commands for the / list.
func (b *backend) CustomCommands() []ui.CustomCommand {
	var out []ui.CustomCommand
	for _, c := range b.con.Setup.Commands() {
		out = append(out, ui.CustomCommand{Name: c.Name, Args: c.ArgumentHint, Help: c.Description})
	}
	return out
}

// PrepareCommand makes the custom command's run on the session, as
// agentty run does (app.Setup.Command): its expanded prompt, the files it
// names attached, its model and allowed-tools for that run alone; note is
// what was left out.
func (b *backend) PrepareCommand(name, arg string) (func(context.Context) <-chan engine.Event, string, error) {
	eng, task, notes, err := b.con.Setup.Command(context.Background(), b.eng(), strings.TrimSpace("/"+name+" "+arg))
	if err != nil {
		return nil, "", err
	}
	return func(ctx context.Context) <-chan engine.Event {
		b.session.UseSettings(b.settings()) // carried by the run's run_started
		return eng.Start(ctx, b.session, task, b.sink)
	}, strings.Join(notes, "\n"), nil
}
