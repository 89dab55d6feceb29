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
// rarer ones higher); words are stemmed, so "retries" finds "retry". With
// an Embedder, the BM25 ranking and the chunks nearest the query's vector
// are fused by reciprocal rank fusion (and a query the embedder cannot
// embed is searched by BM25 alone). It searches the index as it is: call
// Update first for fresh results.
func (ix *Index) Search(ctx context.Context, query, scope string, k int) ([]Hit, error) {
	if k <= 0 {
		k = DefaultK
	}
	var where string
	var args []any
	switch scope {
	case ScopeWorkspace:
		where, args = `scope = ?`, []any{ix.root}
	case ScopeSessions:
		where, args = `scope = ?`, []any{ScopeSessions}
	case ScopeAll, "":
		where, args = `scope IN (?, ?)`, []any{ScopeSessions, ix.root}
	default:
		return nil, fmt.Errorf("search: scope %q: want workspace, sessions or all", scope)
	}
	match := matchExpr(query)
	n := k
	if ix.cfg.Embedder != nil {
		n = max(4*k, 50) // fusion looks further down each list
	}
	var lex []scored
	if match != "" {
		var err error
		if lex, err = ix.lexical(ctx, match, where, args, n); err != nil {
			return nil, fmt.Errorf("search: %q: %w", query, err)
		}
	}
	best := lex[:min(k, len(lex))]
	if ix.cfg.Embedder != nil && ix.embedAvailable() && ix.currentModel() {
		qctx, cancel := context.WithTimeout(ctx, queryEmbedTimeout)
		qv, err := ix.cfg.Embedder.Embed(qctx, []string{query})
		cancel()
		if err != nil && ctx.Err() == nil {
			ix.embedFailed(err) // BM25 alone for a while, not the server's retries at every search
		}
		if err == nil && len(qv) == 1 {
			vec, err := ix.nearest(ctx, qv[0], where, args, n)
			if err != nil {
				return nil, fmt.Errorf("search: %q: %w", query, err)
			}
			best = fuse(k, lex, vec)
		}
	}
	hits, err := ix.hits(ctx, best)
	if err != nil {
		return nil, fmt.Errorf("search: %q: %w", query, err)
	}
	return distinct(hits), nil
}

// distinct keeps each text found once, at its best rank: the same text
// again (a file copied), or one that holds a better hit whole or is held
// by one (an answer that quotes a file it found), however it is spaced.
func distinct(hits []Hit) []Hit {
	kept := make([]string, 0, len(hits))
	out := hits[:0]
	for _, h := range hits {
		t := strings.Join(strings.Fields(h.Text), " ")
		dup := false
		for _, k := range kept {
			if t == k || len(t) >= 40 && strings.Contains(k, t) || len(k) >= 40 && strings.Contains(t, k) {
				dup = true
				break
			}
		}
		if !dup {
			kept = append(kept, t)
			out = append(out, h)
		}
	}
	return out
}

// lexical is the BM25 ranking: the n best chunks within the filter.
func (ix *Index) lexical(ctx context.Context, match, where string, args []any, n int) ([]scored, error) {
	// FTS5's rank is bm25(): lower is better.
	rows, err := ix.db.QueryContext(ctx, `SELECT rowid, rank FROM fts WHERE fts MATCH ? AND `+where+` ORDER BY rank LIMIT ?`,
		append(append([]any{match}, args...), n)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []scored
	for rows.Next() {
		var s scored
		if err := rows.Scan(&s.id, &s.score); err != nil {
			return nil, err
		}
		s.score = -s.score
		out = append(out, s)
	}
	return out, rows.Err()
}

// hits reads the chunks of a ranking, in its order, with its scores.
func (ix *Index) hits(ctx context.Context, ranked []scored) ([]Hit, error) {
	if len(ranked) == 0 {
		return nil, nil
	}
	ids := make([]any, len(ranked))
	for i, s := range ranked {
		ids[i] = s.id
	}
	rows, err := ix.db.QueryContext(ctx, `
SELECT c.id, c.source, c.kind, c.path, c.start_line, c.end_line, c.session, coalesce(s.title, ''), c.run, c.step, c.tool, f.text
FROM chunks c JOIN fts f ON f.rowid = c.id LEFT JOIN sessions s ON s.id = c.session
WHERE c.id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`, ids...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := map[int64]Hit{}
	for rows.Next() {
		var id int64
		var h Hit
		if err := rows.Scan(&id, &h.Source, &h.Kind, &h.Path, &h.StartLine, &h.EndLine, &h.Session, &h.Title, &h.Run, &h.Step, &h.Tool, &h.Text); err != nil {
			return nil, err
		}
		byID[id] = h
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Hit, 0, len(ranked))
	for _, s := range ranked {
		if h, ok := byID[s.id]; ok {
			h.Score = s.score
			out = append(out, h)
		}
	}
	return out, nil
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
