package search

import (
	"database/sql"
	"fmt"
)

// chunkRow is where a chunk came from.
type chunkRow struct {
	source, kind, root, path string
	start, end               int
	session, run             string
	step                     int
	tool                     string
}

// writer adds and deletes chunks in one transaction.
type writer struct {
	tx                        *sql.Tx
	addChunk, addText         *sql.Stmt
	delFileFTS, delFileChunks *sql.Stmt
	delSessFTS, delSessChunks *sql.Stmt
	delFileVecs, delSessVecs  *sql.Stmt
}

func newWriter(tx *sql.Tx) (*writer, error) {
	w := &writer{tx: tx}
	var err error
	prep := func(dst **sql.Stmt, q string) {
		if err == nil {
			*dst, err = tx.Prepare(q)
		}
	}
	prep(&w.addChunk, `INSERT INTO chunks(source, kind, root, path, start_line, end_line, session, run, step, tool) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	prep(&w.addText, `INSERT INTO fts(rowid, text, scope) VALUES (?, ?, ?)`)
	prep(&w.delFileFTS, `DELETE FROM fts WHERE rowid IN (SELECT id FROM chunks WHERE root = ? AND path = ?)`)
	prep(&w.delFileChunks, `DELETE FROM chunks WHERE root = ? AND path = ?`)
	prep(&w.delSessFTS, `DELETE FROM fts WHERE rowid IN (SELECT id FROM chunks WHERE session = ?)`)
	prep(&w.delSessChunks, `DELETE FROM chunks WHERE session = ?`)
	prep(&w.delFileVecs, `DELETE FROM vectors WHERE id IN (SELECT id FROM chunks WHERE root = ? AND path = ?)`)
	prep(&w.delSessVecs, `DELETE FROM vectors WHERE id IN (SELECT id FROM chunks WHERE session = ?)`)
	if err != nil {
		w.close()
		return nil, fmt.Errorf("search: prepare: %w", err)
	}
	return w, nil
}

func (w *writer) close() {
	for _, s := range []*sql.Stmt{w.addChunk, w.addText, w.delFileFTS, w.delFileChunks, w.delSessFTS, w.delSessChunks, w.delFileVecs, w.delSessVecs} {
		if s != nil {
			s.Close()
		}
	}
}

func (w *writer) add(r chunkRow, text string) error {
	res, err := w.addChunk.Exec(r.source, r.kind, r.root, r.path, r.start, r.end, r.session, r.run, r.step, r.tool)
	if err != nil {
		return fmt.Errorf("search: add chunk: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("search: add chunk: %w", err)
	}
	scope := r.root
	if r.source == ScopeSessions {
		scope = ScopeSessions
	}
	if _, err := w.addText.Exec(id, text, scope); err != nil {
		return fmt.Errorf("search: add chunk: %w", err)
	}
	return nil
}

func (w *writer) deleteFile(root, path string) error {
	if _, err := w.delFileVecs.Exec(root, path); err != nil {
		return fmt.Errorf("search: file %s: %w", path, err)
	}
	if _, err := w.delFileFTS.Exec(root, path); err != nil {
		return fmt.Errorf("search: file %s: %w", path, err)
	}
	if _, err := w.delFileChunks.Exec(root, path); err != nil {
		return fmt.Errorf("search: file %s: %w", path, err)
	}
	return nil
}

func (w *writer) deleteSession(id string) error {
	if _, err := w.delSessVecs.Exec(id); err != nil {
		return fmt.Errorf("search: session %s: %w", id, err)
	}
	if _, err := w.delSessFTS.Exec(id); err != nil {
		return fmt.Errorf("search: session %s: %w", id, err)
	}
	if _, err := w.delSessChunks.Exec(id); err != nil {
		return fmt.Errorf("search: session %s: %w", id, err)
	}
	return nil
}
