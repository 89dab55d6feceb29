package console

import (
	"context"
	"errors"

	"github.com/agentty/agentty/search"
	"github.com/agentty/agentty/ui"
)

// The console's search (ctrl+f, /search) asks the picker, which the
// console keeps whatever session is open: ui.New takes a Sessions that is
// a Searcher as its search. It searches the index search_knowledge
// searches (the setup's, opened on the first search and kept open), so
// that the console holds one index, brought up to date before each search
// as agentty search does.
var (
	_ ui.Searcher      = picker{}
	_ ui.SearchIndexer = picker{}
)

// index returns the setup's search index, opening it the first time.
func (p picker) index() (*search.Index, error) {
	if p.setup == nil {
		return nil, errors.New("search: no index in this setup")
	}
	return p.setup.SearchIndex()
}

// UpdateIndex brings the index up to date (builds it the first time): the
// workspace's changed files and the sessions' new events.
func (p picker) UpdateIndex(ctx context.Context) error {
	ix, err := p.index()
	if err != nil {
		return err
	}
	_, err = ix.Update(ctx)
	return err
}

// Search brings the index up to date and returns the k best chunks for
// query in scope.
func (p picker) Search(ctx context.Context, query, scope string, k int) ([]ui.SearchHit, error) {
	if err := p.UpdateIndex(ctx); err != nil {
		return nil, err
	}
	ix, err := p.index()
	if err != nil {
		return nil, err
	}
	hits, err := ix.Search(ctx, query, scope, k)
	if err != nil {
		return nil, err
	}
	out := make([]ui.SearchHit, len(hits))
	for i, h := range hits {
		out[i] = ui.SearchHit{Source: h.Source, Kind: h.Kind, Where: h.Where(), Path: h.Path, StartLine: h.StartLine,
			EndLine: h.EndLine, Session: h.Session, Title: h.Title, Run: h.Run, Step: h.Step, Score: h.Score, Text: h.Text}
	}
	return out, nil
}
