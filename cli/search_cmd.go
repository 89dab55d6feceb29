package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/search"
)

// searchCmd runs `agentty search QUERY [--scope workspace|sessions|all]
// [--json] [-k N]`: it brings the index up to date and prints the best
// chunks.
func searchCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("search", stderr)
	var o app.Options
	fs.StringVar(&o.DataDir, "data-dir", "", "where sessions live")
	fs.StringVar(&o.Workspace, "workspace", "", "the folder whose files are searched (default: the current folder)")
	scope := fs.String("scope", search.ScopeAll, "workspace, sessions or all")
	k := fs.Int("k", 10, "how many chunks")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseInterspersed(fs, args); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "agentty search: %s\n", strings.TrimPrefix(err.Error(), "search: "))
		return code
	}
	query := strings.TrimSpace(strings.Join(fs.Args(), " "))
	switch {
	case query == "":
		return fail(app.ExitUsage, errors.New("say what to search for: agentty search QUERY [--scope workspace|sessions|all] [--json] [-k N]"))
	case *scope != search.ScopeWorkspace && *scope != search.ScopeSessions && *scope != search.ScopeAll:
		return fail(app.ExitUsage, fmt.Errorf("--scope %q: want workspace, sessions or all", *scope))
	case *k <= 0:
		return fail(app.ExitUsage, fmt.Errorf("-k %d: want at least 1", *k))
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
	hits, err := ix.Search(ctx, query, *scope, *k)
	if err != nil {
		return fail(app.ExitError, err)
	}
	if *asJSON {
		if hits == nil {
			hits = []search.Hit{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			Query string       `json:"query"`
			Scope string       `json:"scope"`
			Hits  []search.Hit `json:"hits"`
		}{query, *scope, hits})
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

// indexCmd runs `agentty index [--rebuild] [--json]`: it brings the index
// up to date (or builds it anew) and says what it holds.
func indexCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("index", stderr)
	var o app.Options
	fs.StringVar(&o.DataDir, "data-dir", "", "where sessions live")
	fs.StringVar(&o.Workspace, "workspace", "", "the folder whose files are indexed (default: the current folder)")
	rebuild := fs.Bool("rebuild", false, "throw the index away and build it anew")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseInterspersed(fs, args); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "agentty index: %s\n", strings.TrimPrefix(err.Error(), "search: "))
		return code
	}
	if fs.NArg() > 0 {
		return fail(app.ExitUsage, fmt.Errorf("unexpected argument %q (agentty index [--rebuild] [--json])", fs.Arg(0)))
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
	if *rebuild {
		update = ix.Rebuild
	}
	st, err := update(ctx)
	if err != nil {
		return fail(app.ExitError, err)
	}
	took := time.Since(start)
	if *asJSON {
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
