package search

import (
	"context"
	"fmt"
	"strings"
	"unicode"
)

// DefaultK is how many hits a search returns when k is 0.
const DefaultK = 10

// Search returns the k best chunks for query within scope (workspace,
// sessions or all), best first. The query's words are matched in any
// order, any one of them enough (BM25 ranks the chunks with more and
// rarer ones higher); words are stemmed, so "retries" finds "retry". It
// searches the index as it is: call Update first for fresh results.
func (ix *Index) Search(ctx context.Context, query, scope string, k int) ([]Hit, error) {
	if k <= 0 {
		k = DefaultK
	}
	match := matchExpr(query)
	if match == "" {
		return nil, nil
	}
	var where string
	args := []any{match}
	switch scope {
	case ScopeWorkspace:
		where, args = `scope = ?`, append(args, ix.root)
	case ScopeSessions:
		where, args = `scope = ?`, append(args, ScopeSessions)
	case ScopeAll, "":
		where, args = `scope IN (?, ?)`, append(args, ScopeSessions, ix.root)
	default:
		return nil, fmt.Errorf("search: scope %q: want workspace, sessions or all", scope)
	}
	args = append(args, k)
	// FTS5's rank is bm25() by default: lower is better.
	rows, err := ix.db.QueryContext(ctx, `
SELECT c.source, c.kind, c.path, c.start_line, c.end_line, c.session, coalesce(s.title, ''), c.run, c.step, c.tool,
	f.text, f.score
FROM (SELECT rowid AS id, text, rank AS score FROM fts WHERE fts MATCH ? AND `+where+` ORDER BY rank LIMIT ?) f
JOIN chunks c ON c.id = f.id LEFT JOIN sessions s ON s.id = c.session
ORDER BY f.score`, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %q: %w", query, err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.Source, &h.Kind, &h.Path, &h.StartLine, &h.EndLine, &h.Session, &h.Title, &h.Run, &h.Step, &h.Tool, &h.Text, &h.Score); err != nil {
			return nil, fmt.Errorf("search: %q: %w", query, err)
		}
		h.Score = -h.Score // FTS5's bm25 is lower for better matches
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %q: %w", query, err)
	}
	return hits, nil
}

// matchExpr turns free text into an FTS5 query: each word quoted (so that
// nothing in it is read as FTS5 syntax), joined by OR. Words are runs of
// letters and digits, as the index's tokenizer cuts them.
func matchExpr(q string) string {
	words := strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	seen := map[string]bool{}
	var out []string
	for _, w := range words {
		w = strings.ToLower(w)
		if seen[w] || stopword[w] {
			continue
		}
		seen[w] = true
		out = append(out, `"`+w+`"`)
	}
	if len(out) == 0 { // only stop words: search for them after all
		for _, w := range words {
			out = append(out, `"`+strings.ToLower(w)+`"`)
		}
	}
	return strings.Join(out, " OR ")
}

// stopword holds words too common to help a ranking; a query is mostly
// a question ("what did we say about the retry policy?").
var stopword = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or of to in on at for with by from is are was were be been it its
		this that these those what which who whom when where why how did do does done we you i me my our your they them
		say said about there here as not no can could would should will shall have has had any some`) {
		stopword[w] = true
	}
}
