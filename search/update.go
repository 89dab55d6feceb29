package search

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/tools"
)

// batchFiles is how many changed files one transaction writes: progress
// is told, and a cancelled update keeps what it had done, per batch.
const batchFiles = 500

// Update brings the index up to date: files added, changed or removed
// since the last update, and sessions with new events or removed, are
// indexed again; nothing else is read. It returns the index's stats with
// what it changed.
func (ix *Index) Update(ctx context.Context) (Stats, error) {
	unlock, err := lockDir(ix.cfg.Dir, ix.tell("lock wait"))
	if err != nil {
		return Stats{}, err
	}
	defer unlock()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var st Stats
	if ix.root != "" {
		if err := ix.updateFiles(ctx, &st); err != nil {
			return st, err
		}
	}
	if ix.cfg.Sessions != nil {
		if err := ix.updateSessions(ctx, &st); err != nil {
			return st, err
		}
	}
	embedErr := ""
	switch {
	case ix.cfg.Embedder == nil:
	case !ix.embedAvailable():
		if why := ix.embedWhy.Load(); why != nil {
			embedErr = *why + " (BM25 alone for a minute)"
		}
	case !ix.currentModel():
		_, other := ix.modelCurrent()
		embedErr = fmt.Sprintf("the index's vectors are now %s's (another agentty uses that model): BM25 alone here", other)
	default:
		if err := ix.embedMissing(ctx); err != nil {
			if ctx.Err() != nil {
				return st, err
			}
			ix.embedFailed(err)
			embedErr = err.Error()
		}
	}
	if _, err := ix.db.Exec(`INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`,
		"updated:"+ix.root, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
		return st, fmt.Errorf("search: update: %w", err)
	}
	if st.Removed+st.SessionsRemoved > 0 {
		ix.reclaim(ctx, st.Removed+st.SessionsRemoved)
	}
	if st.Added+st.Removed+st.SessionsUpdated+st.SessionsRemoved > 0 {
		// Fold the write-ahead log into the database, so that it does not
		// hold a second copy of what changed (best effort: a reader in
		// another process may keep it).
		ix.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	}
	full, err := ix.Stats()
	full.EmbedError = embedErr
	full.Added, full.Removed, full.SessionsUpdated, full.SessionsRemoved = st.Added, st.Removed, st.SessionsUpdated, st.SessionsRemoved
	return full, err
}

// reclaim gives back to the file system the space of what was removed
// (removed files and sessions; best effort, like the checkpoint after it):
// the pages left free are cut off the file, and when a tenth or more of the
// index went, the full-text index is merged first, dropping the removed
// rows' entries (a merge rewrites it: for a few removals the full-text
// index's own merges give their space back in time). An index made before
// auto_vacuum was set is vacuumed whole once, when a quarter of it is free.
func (ix *Index) reclaim(ctx context.Context, removed int) {
	var kept int
	if ix.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM files) + (SELECT count(*) FROM sessions)`).Scan(&kept) == nil && removed*10 >= removed+kept {
		ix.db.ExecContext(ctx, `INSERT INTO fts(fts) VALUES ('optimize')`)
	}
	conn, err := ix.db.Conn(ctx) // the pragmas and the vacuum on one connection
	if err != nil {
		return
	}
	defer conn.Close()
	var mode, free, pages int
	for _, q := range []struct {
		pragma string
		into   *int
	}{{"auto_vacuum", &mode}, {"freelist_count", &free}, {"page_count", &pages}} {
		if err := conn.QueryRowContext(ctx, `PRAGMA `+q.pragma).Scan(q.into); err != nil {
			return
		}
	}
	switch {
	case pages == 0 || free == 0:
	case mode == autoVacuumIncremental:
		conn.ExecContext(ctx, `PRAGMA incremental_vacuum`)
	case free*4 >= pages:
		conn.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`)
		conn.ExecContext(ctx, `VACUUM`)
	}
}

// tell returns a function that tells the hook of what, or nil with no hook.
func (ix *Index) tell(what string) func() {
	if ix.hook == nil {
		return nil
	}
	return func() { ix.hook(what) }
}

type fileRow struct {
	size, mtime int64
	hash        string
}

func (ix *Index) updateFiles(ctx context.Context, st *Stats) error {
	known, err := ix.knownFiles(ctx)
	if err != nil {
		return err
	}
	maxBytes := cmp.Or(max(ix.cfg.MaxFileBytes, 0), 1<<20)
	var batch []fileChange
	var prog Progress
	seen := map[string]bool{}
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := ix.writeFiles(ctx, batch); err != nil {
			return err
		}
		prog.FilesIndexed += len(batch)
		batch = batch[:0]
		if ix.cfg.Progress != nil {
			ix.cfg.Progress(prog)
		}
		return nil
	}
	root, err := os.OpenRoot(ix.root)
	if err != nil {
		return fmt.Errorf("search: workspace %s: %w", ix.root, err)
	}
	defer root.Close()
	fsys := root.FS() // nothing outside the workspace, even through a symlink
	err = tools.WalkText(ctx, fsys, func(p string, d fs.DirEntry) error {
		prog.FilesSeen++
		fi, err := d.Info()
		if err != nil || fi.Size() > maxBytes {
			return nil
		}
		row := fileRow{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
		old, ok := known[p]
		if ok && old.size == row.size && old.mtime == row.mtime {
			seen[p] = true
			return nil
		}
		b, err := readRegular(root, p, maxBytes)
		if err != nil || tools.IsBinary(b) {
			return nil // unreadable or binary: not indexed (and dropped if it was)
		}
		seen[p] = true
		sum := sha256.Sum256(b)
		row.hash = hex.EncodeToString(sum[:])
		c := fileChange{path: p, row: row}
		if !ok || old.hash != row.hash {
			c.data = b
			st.Added++
		}
		batch = append(batch, c)
		if len(batch) >= batchFiles {
			return flush()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("search: walk %s: %w", ix.root, err)
	}
	if err := flush(); err != nil {
		return err
	}
	gone := slices.DeleteFunc(slices.Collect(maps.Keys(known)), func(p string) bool { return seen[p] })
	if err := ix.removeFiles(ctx, gone); err != nil {
		return err
	}
	st.Removed += len(gone)
	if ix.cfg.Progress != nil {
		prog.Done = true
		ix.cfg.Progress(prog)
	}
	return nil
}

// knownFiles are the workspace's files as the index has them.
func (ix *Index) knownFiles(ctx context.Context) (map[string]fileRow, error) {
	known := map[string]fileRow{}
	rows, err := ix.db.QueryContext(ctx, `SELECT path, size, mtime, hash FROM files WHERE root = ?`, ix.root)
	if err != nil {
		return nil, fmt.Errorf("search: files: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		var r fileRow
		if err := rows.Scan(&p, &r.size, &r.mtime, &r.hash); err != nil {
			return nil, fmt.Errorf("search: files: %w", err)
		}
		known[p] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: files: %w", err)
	}
	return known, nil
}

// fileChange is a workspace file that changed since the index saw it.
type fileChange struct {
	path string
	row  fileRow
	data []byte // nil: only size and mtime changed
}

// writeFiles writes a batch of changed files in one transaction: the
// chunks of those whose content changed, and every one's size, time and
// hash.
func (ix *Index) writeFiles(ctx context.Context, batch []fileChange) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("search: files: %w", err)
	}
	defer tx.Rollback()
	w, err := newWriter(tx)
	if err != nil {
		return err
	}
	defer w.close()
	for _, c := range batch {
		if c.data != nil {
			if err := w.deleteFile(ix.root, c.path); err != nil {
				return err
			}
			for _, p := range chunk(string(c.data), ix.cfg.ChunkLines, ix.cfg.ChunkBytes, ix.cfg.Overlap) {
				if err := w.add(chunkRow{source: ScopeWorkspace, kind: KindFile, root: ix.root, path: c.path, start: p.Start, end: p.End}, p.Text); err != nil {
					return err
				}
			}
		}
		if _, err := tx.Exec(`INSERT OR REPLACE INTO files(root, path, size, mtime, hash) VALUES (?, ?, ?, ?, ?)`,
			ix.root, c.path, c.row.size, c.row.mtime, c.row.hash); err != nil {
			return fmt.Errorf("search: file %s: %w", c.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("search: files: %w", err)
	}
	return nil
}

// removeFiles drops the files that are gone from the workspace, and their
// chunks, in one transaction.
func (ix *Index) removeFiles(ctx context.Context, gone []string) error {
	if len(gone) == 0 {
		return nil
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("search: files: %w", err)
	}
	defer tx.Rollback()
	w, err := newWriter(tx)
	if err != nil {
		return err
	}
	defer w.close()
	for _, p := range gone {
		if err := w.deleteFile(ix.root, p); err != nil {
			return err
		}
		if _, err := tx.Exec(`DELETE FROM files WHERE root = ? AND path = ?`, ix.root, p); err != nil {
			return fmt.Errorf("search: file %s: %w", p, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("search: files: %w", err)
	}
	return nil
}

type sessionRow struct {
	size   int64
	events int
}

func (ix *Index) updateSessions(ctx context.Context, st *Stats) error {
	known := map[string]sessionRow{}
	rows, err := ix.db.QueryContext(ctx, `SELECT id, size, events FROM sessions`)
	if err != nil {
		return fmt.Errorf("search: sessions: %w", err)
	}
	for rows.Next() {
		var id string
		var r sessionRow
		if err := rows.Scan(&id, &r.size, &r.events); err != nil {
			rows.Close()
			return fmt.Errorf("search: sessions: %w", err)
		}
		known[id] = r
	}
	rows.Close()
	if ix.hook != nil {
		ix.hook("sessions read")
	}
	list, err := ix.cfg.Sessions.List()
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	seen := map[string]bool{}
	for _, l := range list {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		id := l.ID
		if id == "" {
			continue
		}
		seen[id] = true
		fi, err := os.Stat(ix.cfg.Sessions.JournalPath(id))
		if err != nil {
			continue
		}
		old, ok := known[id]
		if ok && old.size == fi.Size() {
			continue
		}
		loaded, err := ix.cfg.Sessions.Load(id)
		if loaded == nil {
			continue // unreadable: tried again next time
		}
		_ = err // a corrupt line: what came before it is indexed
		if err := ix.indexSession(ctx, id, loaded, fi.Size(), old, ok); err != nil {
			return err
		}
		st.SessionsUpdated++
	}
	for id := range known {
		if seen[id] {
			continue
		}
		if err := ix.dropSession(ctx, id); err != nil {
			return err
		}
		st.SessionsRemoved++
	}
	return nil
}

// indexSession indexes the session's events after the ones indexed
// before; a journal that shrank (rewritten) is indexed anew.
func (ix *Index) indexSession(ctx context.Context, id string, l *sessions.Loaded, size int64, old sessionRow, known bool) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("search: session %s: %w", id, err)
	}
	defer tx.Rollback()
	w, err := newWriter(tx)
	if err != nil {
		return err
	}
	defer w.close()
	from := old.events
	if !known || size < old.size || len(l.Events) < old.events {
		if err := w.deleteSession(id); err != nil {
			return err
		}
		from = 0
	}
	for _, ev := range l.Events[from:] {
		kind, tool, text := eventText(ev)
		if text == "" {
			continue
		}
		for _, p := range chunk(text, ix.cfg.ChunkLines, ix.cfg.ChunkBytes, ix.cfg.Overlap) {
			if err := w.add(chunkRow{source: ScopeSessions, kind: kind, session: id, run: ev.Run, step: ev.Step, tool: tool}, p.Text); err != nil {
				return err
			}
		}
	}
	if _, err := tx.Exec(`INSERT OR REPLACE INTO sessions(id, size, events, title) VALUES (?, ?, ?, ?)`,
		id, size, len(l.Events), l.Meta.Title); err != nil {
		return fmt.Errorf("search: session %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("search: session %s: %w", id, err)
	}
	return nil
}

// eventText is what of an event is searchable: the task of a run (what
// the user asked), its answer, a tool's result and a memory fact set.
func eventText(ev engine.Event) (kind, tool, text string) {
	switch d := ev.Data.(type) {
	case *engine.RunStarted:
		if ev.ParentRun == "" {
			return KindUser, "", d.Task
		}
		return KindUser, "agent " + ev.Agent, d.Task
	case *engine.RunFinished:
		return KindAnswer, "", d.Answer
	case *engine.ToolFinished:
		if d.Status != engine.ToolOK || memoryTools[d.Name] || d.Name == "search_knowledge" {
			return "", "", ""
		}
		return KindTool, d.Name, d.Result
	case *engine.MemoryChanged:
		if d.Op == engine.MemorySet {
			return KindMemory, "", d.Key + ": " + d.Value
		}
	}
	return "", "", ""
}

// memoryTools' results only echo memory facts, which are indexed from
// memory_changed; search_knowledge's only echo other chunks.
var memoryTools = map[string]bool{"remember": true, "recall": true, "forget": true}

func (ix *Index) dropSession(ctx context.Context, id string) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("search: session %s: %w", id, err)
	}
	defer tx.Rollback()
	w, err := newWriter(tx)
	if err != nil {
		return err
	}
	defer w.close()
	if err := w.deleteSession(id); err != nil {
		return err
	}
	if _, err := tx.Exec(`DELETE FROM sessions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("search: session %s: %w", id, err)
	}
	return tx.Commit()
}

// readRegular reads the file at p in root if it is (still, when opened) a
// regular file of at most limit bytes: one swapped for a FIFO or a device
// since the walk saw it is refused, never waited on.
func readRegular(root *os.Root, p string, limit int64) ([]byte, error) {
	f, err := root.OpenFile(filepath.FromSlash(p), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, fmt.Errorf("%s: not a regular file of at most %d bytes", p, limit)
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}
