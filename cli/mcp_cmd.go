package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
)

// mcpImportOptions are the flags of agentty mcp import.
type mcpImportOptions struct {
	*factory
	From  string
	Write bool
}

// newMCPCmd is `agentty mcp`, whose command is import.
func newMCPCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp import",
		Short: "Bring in the MCP servers Codex and Claude Code are set up with",
		Args:  commandArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(f.Err, "agentty mcp: say import (agentty mcp import -h)")
			return exit(app.ExitUsage)
		},
	}
	opts := &mcpImportOptions{factory: f}
	imp := &cobra.Command{
		Use:   "import [--from codex|claude|all] [--write]",
		Short: "Print (or write into your config) the MCP servers of ~/.codex/config.toml and ~/.claude.json",
		Long: `Reads Codex's [mcp_servers] (~/.codex/config.toml, or $CODEX_HOME's) and Claude
Code's mcpServers (~/.claude.json: the user's, and the current folder's project
entry) and prints them as agentty's mcpServers. With --write they are added to your
own config file (servers it has already are kept as they are). Nothing is started.`,
		Example: `  agentty mcp import
  agentty mcp import --from codex --write`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit(mcpImportRun(opts))
		},
	}
	imp.Flags().StringVar(&opts.From, "from", "all", "codex, claude or all")
	imp.Flags().BoolVar(&opts.Write, "write", false, "add them to your config file instead of printing them")
	imp.RegisterFlagCompletionFunc("from", cobra.FixedCompletions([]cobra.Completion{"codex", "claude", "all"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.AddCommand(imp)
	return cmd
}

// mcpImportRun reads the servers and prints them, or writes them into the
// person's config file.
func mcpImportRun(opts *mcpImportOptions) int {
	fail := func(code int, err error) int {
		fmt.Fprintln(opts.Err, "agentty mcp import:", err)
		return code
	}
	var im config.Imported
	var read []string
	if opts.From == "codex" || opts.From == "all" {
		p := config.CodexConfigPath(opts.Getenv)
		if err := im.ImportCodex(p); err != nil {
			return fail(app.ExitError, err)
		}
		read = append(read, p)
	}
	if opts.From == "claude" || opts.From == "all" {
		p := config.ClaudeConfigPath(opts.Getenv)
		cwd, _ := filepath.Abs(".")
		if err := im.ImportClaude(p, cwd); err != nil {
			return fail(app.ExitError, err)
		}
		read = append(read, p)
	}
	if len(read) == 0 {
		return fail(app.ExitUsage, fmt.Errorf("--from %s: want codex, claude or all", opts.From))
	}
	for _, n := range im.Notes {
		fmt.Fprintln(opts.Err, "agentty mcp import: warning:", n)
	}
	if len(im.Servers) == 0 {
		fmt.Fprintf(opts.Err, "agentty mcp import: no MCP servers in %v\n", read)
		return 0
	}
	if !opts.Write {
		b, _ := json.MarshalIndent(map[string]any{"mcpServers": im.Shown()}, "", "  ")
		fmt.Fprintf(opts.Out, "%s\n", b)
		fmt.Fprintf(opts.Err, "agentty mcp import: %d %s; add them to %s with --write\n", len(im.Servers), engine.Plural(len(im.Servers), "server"), config.Path(opts.Getenv))
		return 0
	}
	path := config.Path(opts.Getenv)
	added, err := config.MergeMCPServers(path, im.Servers)
	if err != nil {
		return fail(app.ExitError, err)
	}
	for _, name := range added {
		fmt.Fprintf(opts.Out, "added %s (from %s)\n", name, im.From[name])
	}
	if len(added) == 0 {
		fmt.Fprintf(opts.Out, "all %d %s are in %s already (a server of the same name there is kept)\n", len(im.Servers), engine.Plural(len(im.Servers), "server"), path)
		return 0
	}
	fmt.Fprintf(opts.Out, "%d of %d %s added to %s; agentty tools lists their tools\n", len(added), len(im.Servers), engine.Plural(len(im.Servers), "server"), path)
	if _, err := os.Stat(path); err != nil {
		return fail(app.ExitError, err)
	}
	return 0
}
