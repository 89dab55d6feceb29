package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/search"
)

// searchOptions are the flags and arguments of agentty search.
type searchOptions struct {
	*factory
	Scope  string
	K      int
	AsJSON bool
	Args   []string
}

// newSearchCmd binds the flags of its command into its options.
func newSearchCmd(f *factory) *cobra.Command {
	opts := &searchOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "search QUERY [--scope workspace|sessions|all] [-k N] [--json]",
		Short: "Search the workspace's files and the past sessions (BM25)",
		Example: `  agentty search "retry backoff"
  agentty search --scope sessions -k 3 "what did we decide about the cache"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			return exit(searchRun(cmd.Context(), opts))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Scope, "scope", search.ScopeAll, "workspace, sessions or all")
	fs.IntVarP(&opts.K, "k", "k", 10, "how many chunks")
	fs.BoolVar(&opts.AsJSON, "json", false, "print JSON")
	cmd.RegisterFlagCompletionFunc("scope", cobra.FixedCompletions([]cobra.Completion{"workspace", "sessions", "all"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// searchRun runs `agentty search QUERY [--scope workspace|sessions|all]
// [--json] [-k N]`: it brings the index up to date and prints the best
// chunks.
func searchRun(ctx context.Context, opts *searchOptions) int {
	o := *opts.App
	stdout, stderr, getenv := opts.Out, opts.Err, opts.Getenv
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "agentty search: %s\n", strings.TrimPrefix(err.Error(), "search: "))
		return code
	}
	query := strings.TrimSpace(strings.Join(opts.Args, " "))
	switch {
	case query == "":
		return fail(app.ExitUsage, errors.New("say what to search for: agentty search QUERY [--scope workspace|sessions|all] [--json] [-k N]"))
	case opts.Scope != search.ScopeWorkspace && opts.Scope != search.ScopeSessions && opts.Scope != search.ScopeAll:
		return fail(app.ExitUsage, fmt.Errorf("--scope %q: want workspace, sessions or all", opts.Scope))
	case opts.K <= 0:
		return fail(app.ExitUsage, fmt.Errorf("-k %d: want at least 1", opts.K))
	}
	store, err := o.LocalStore(getenv)
	if err != nil {
		return fail(app.ExitError, err)
	}
	ix, err := app.OpenIndex(o, store, stderr, getenv)
	if err != nil {
		return fail(app.ExitError, err)
	}
	defer ix.Close()
	if _, err := ix.Update(ctx); err != nil {
		return fail(app.ExitError, err)
	}
	hits, err := ix.Search(ctx, query, opts.Scope, opts.K)
	if err != nil {
		return fail(app.ExitError, err)
	}
	if opts.AsJSON {
		if hits == nil {
			hits = []search.Hit{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			Query string       `json:"query"`
			Scope string       `json:"scope"`
			Hits  []search.Hit `json:"hits"`
		}{query, opts.Scope, hits})
		return 0
	}
	if len(hits) == 0 {
		fmt.Fprintf(stdout, "nothing found for %q\n", query)
		return 0
	}
	for i, h := range hits {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "%d. %s  (score %.2f)\n", i+1, h.Where(), h.Score)
		for _, line := range preview(h.Text, query, 3) {
			fmt.Fprintf(stdout, "   %s\n", line)
		}
	}
	return 0
}

// preview is up to n lines of a chunk to show under a hit: the lines
// that hold a word of the query (by its first five letters, a crude stem),
// else the first lines that are not blank; each on one line, cut to fit,
// "…" after them when lines were left out.
func preview(text, query string, n int) []string {
	var stems []string
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 4 {
			stems = append(stems, w[:min(len(w), 5)])
		}
	}
	var lines, hits []string
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		lines = append(lines, line)
		lower := strings.ToLower(line)
		for _, st := range stems {
			if strings.Contains(lower, st) {
				hits = append(hits, line)
				break
			}
		}
	}
	if len(hits) == 0 {
		hits = lines
	}
	var out []string
	for _, line := range hits[:min(n, len(hits))] {
		out = append(out, engine.OneLine(line, 100))
	}
	if len(lines) > len(out) {
		out = append(out, "…")
	}
	return out
}

// indexOptions are the flags and arguments of agentty index.
type indexOptions struct {
	*factory
	Rebuild bool
	AsJSON  bool
	Args    []string
}

// newIndexCmd binds the flags of its command into its options.
func newIndexCmd(f *factory) *cobra.Command {
	opts := &indexOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "index [--rebuild] [--json]",
		Short: "Bring the search index up to date and say what it holds",
		Example: `  agentty index
  agentty index --rebuild`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			return exit(indexRun(cmd.Context(), opts))
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&opts.Rebuild, "rebuild", false, "throw the index away and build it anew")
	fs.BoolVar(&opts.AsJSON, "json", false, "print JSON")
	return cmd
}

// indexRun runs `agentty index [--rebuild] [--json]`: it brings the index
// up to date (or builds it anew) and says what it holds.
func indexRun(ctx context.Context, opts *indexOptions) int {
	o := *opts.App
	stdout, stderr, getenv := opts.Out, opts.Err, opts.Getenv
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "agentty index: %s\n", strings.TrimPrefix(err.Error(), "search: "))
		return code
	}
	if len(opts.Args) > 0 {
		return fail(app.ExitUsage, fmt.Errorf("unexpected argument %q (agentty index [--rebuild] [--json])", arg(opts.Args, 0)))
	}
	store, err := o.LocalStore(getenv)
	if err != nil {
		return fail(app.ExitError, err)
	}
	ix, err := app.OpenIndex(o, store, stderr, getenv)
	if err != nil {
		return fail(app.ExitError, err)
	}
	defer ix.Close()
	start := time.Now()
	update := ix.Update
	if opts.Rebuild {
		update = ix.Rebuild
	}
	st, err := update(ctx)
	if err != nil {
		return fail(app.ExitError, err)
	}
	took := time.Since(start)
	if opts.AsJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			search.Stats
			Added           int   `json:"files_added"`
			Removed         int   `json:"files_removed"`
			SessionsUpdated int   `json:"sessions_updated"`
			SessionsRemoved int   `json:"sessions_removed"`
			TookMS          int64 `json:"took_ms"`
		}{st, st.Added, st.Removed, st.SessionsUpdated, st.SessionsRemoved, took.Milliseconds()})
		return 0
	}
	fmt.Fprintf(stdout, "index    %s (%s)\n", st.Path, sizeWords(st.Bytes))
	fmt.Fprintf(stdout, "files    %d in %s, %d chunks\n", st.Files, st.Workspace, st.FileChunk)
	fmt.Fprintf(stdout, "sessions %d, %d chunks\n", st.Sessions, st.Chunks-st.FileChunk)
	fmt.Fprintf(stdout, "updated  %s: %d files added or changed, %d removed; %d sessions with new events, %d removed (%s)\n",
		st.Updated.Local().Format("2006-01-02 15:04:05"), st.Added, st.Removed, st.SessionsUpdated, st.SessionsRemoved, took.Round(time.Millisecond))
	return 0
}

func sizeWords(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
