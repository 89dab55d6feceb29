package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/acp"
	"github.com/agentty/agentty/app"
)

// newACPCmd is `agentty acp`: agentty as an editor's agent, over the Agent
// Client Protocol on stdio.
func newACPCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "acp [flags]",
		Short: "Serve the Agent Client Protocol on stdio: agentty as the agent of Zed and other editors",
		Long: `Speaks ACP (JSON-RPC over stdin and stdout) to an editor that starts it. Each
session/new is an agentty session in the editor's folder, journaled like any other
(agentty sessions ls lists it); a prompt is a run whose text and tool calls stream to
the editor; a tool that asks is a permission request there. The folder's trust is
judged as everywhere (agentty trust DIR). See docs/editors.md.`,
		Example: `  agentty acp --model gpt-4o-mini
  # Zed, settings.json:
  #   "agent_servers": {"agentty": {"command": "agentty", "args": ["acp"]}}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			withRunFlags(cmd, f.App)
			if err := acp.Serve(cmd.Context(), *f.App, f.In, app.RawOf(f.Out), f.Err, f.Getenv); err != nil {
				fmt.Fprintln(f.Err, "agentty acp:", err)
				return exit(codeOf(err))
			}
			return nil
		},
	}
	addRunFlags(cmd.Flags(), f.App)
	return cmd
}
