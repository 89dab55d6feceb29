package search

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// embedBatch is how many chunks one round of embedding takes from the
// database (the embedder may cut it into smaller requests).
const embedBatch = 256

// checkModel throws the vectors away when they were made by another
// embedding model than the configured one.
func (ix *Index) checkModel() error {
	var model string
	err := ix.db.QueryRow(`SELECT value FROM meta WHERE key = 'embedding_model'`).Scan(&model)
	if err != nil && err != sql.ErrNoRows {
		return err
	}
	if err == nil && model == ix.cfg.EmbeddingModel {
		return nil
	}
	tx, err := ix.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`DELETE FROM vectors`); err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT OR REPLACE INTO meta(key, value) VALUES ('embedding_model', ?)`, ix.cfg.EmbeddingModel); err != nil {
		return err
	}
	return tx.Commit()
}

// modelCurrent reports whether the index's vectors are (still) those of
// the configured model: another process, configured with another model,
// may have taken the index since this one opened it. Such an index is
// searched by BM25 alone here, and this process adds no vectors to it.
func (ix *Index) modelCurrent() (bool, string) {
	var model string
	if err := ix.db.QueryRow(`SELECT value FROM meta WHERE key = 'embedding_model'`).Scan(&model); err != nil {
		return false, ""
	}
	return model == ix.cfg.EmbeddingModel, model
}

func (ix *Index) currentModel() bool {
	ok, _ := ix.modelCurrent()
	return ok
}

// embedMissing gives a vector to every chunk in this index's scope that
// has none, a batch at a time; what was embedded before an error is kept.
func (ix *Index) embedMissing(ctx context.Context) error {
	for {
		rows, err := ix.db.QueryContext(ctx, `
SELECT f.rowid, f.text, f.scope FROM fts f LEFT JOIN vectors v ON v.id = f.rowid
WHERE f.scope IN (?, ?) AND v.id IS NULL LIMIT ?`, ScopeSessions, ix.root, embedBatch)
		if err != nil {
			return fmt.Errorf("search: vectors: %w", err)
		}
		var ids []int64
		var texts, scopes []string
		for rows.Next() {
			var id int64
			var text, scope string
			if err := rows.Scan(&id, &text, &scope); err != nil {
				rows.Close()
				return fmt.Errorf("search: vectors: %w", err)
			}
			ids, texts, scopes = append(ids, id), append(texts, text), append(scopes, scope)
		}
		rows.Close()
		if len(ids) == 0 {
			return nil
		}
		vs, err := ix.cfg.Embedder.Embed(ctx, texts)
		if err != nil {
			return err
		}
		if len(vs) != len(ids) {
			return fmt.Errorf("search: embeddings: %d vectors for %d texts", len(vs), len(ids))
		}
		tx, err := ix.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("search: vectors: %w", err)
		}
		for i, id := range ids {
			if _, err := tx.Exec(`INSERT OR REPLACE INTO vectors(id, scope, v) VALUES (?, ?, ?)`, id, scopes[i], encode(vs[i])); err != nil {
				tx.Rollback()
				return fmt.Errorf("search: vectors: %w", err)
			}
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("search: vectors: %w", err)
		}
	}
}

// encode stores v normalised to unit length, as little-endian float32s,
// so that cosine similarity is a dot product.
func encode(v []float32) []byte {
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	norm = math.Sqrt(norm)
	if norm == 0 {
		norm = 1
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(float64(x)/norm)))
	}
	return b
}

// dot is the dot product of q (unit length) and the stored vector b; a
// vector of another length (another model's) scores nothing.
func dot(q []float32, b []byte) float32 {
	if len(b) != 4*len(q) {
		return -2
	}
	var s float32
	for i, x := range q {
		s += x * math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return s
}

// scored is a chunk and its score in one ranking.
type scored struct {
	id    int64
	score float64
}

// nearest returns the n chunks within the filter whose vectors are
// closest to q by cosine similarity, best first: an exact scan.
func (ix *Index) nearest(ctx context.Context, q []float32, where string, args []any, n int) ([]scored, error) {
	unit := decode(encode(q))
	rows, err := ix.db.QueryContext(ctx, `SELECT id, v FROM vectors WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("search: vectors: %w", err)
	}
	defer rows.Close()
	var best []scored
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return nil, fmt.Errorf("search: vectors: %w", err)
		}
		s := float64(dot(unit, b))
		if len(best) == n && s <= best[n-1].score {
			continue
		}
		i, _ := slices.BinarySearchFunc(best, s, func(e scored, t float64) int {
			if e.score > t {
				return -1
			}
			return 1
		})
		best = slices.Insert(best, i, scored{id, s})
		if len(best) > n {
			best = best[:n]
		}
	}
	return best, rows.Err()
}

func decode(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// rrfK is reciprocal rank fusion's constant: a chunk ranked r in a list
// adds 1/(rrfK + r) to its fused score.
const rrfK = 60

// fuse merges rankings by reciprocal rank fusion and returns the best k,
// best first; ties keep the order of the first ranking.
func fuse(k int, rankings ...[]scored) []scored {
	sum := map[int64]float64{}
	var order []int64
	for _, r := range rankings {
		for rank, s := range r {
			if _, ok := sum[s.id]; !ok {
				order = append(order, s.id)
			}
			sum[s.id] += 1 / float64(rrfK+rank+1)
		}
	}
	out := make([]scored, len(order))
	for i, id := range order {
		out[i] = scored{id, sum[id]}
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	return out[:min(k, len(out))]
}
