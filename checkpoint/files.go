package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/agentty/agentty/engine"
)

// Files mode: outside a git repository a checkpoint keeps the files the
// file tools name, as they were, each by the hash of its content in
// <data>/checkpoints/files; a files-mode "after" keeps the files the
// run's checkpoints kept.

// fileTools are the tools whose path argument names a workspace file they
// change.
var fileTools = []string{"write_file", "edit_file"}

// noteShell is what a files-mode checkpoint says of a shell command.
const noteShell = "outside a git repository only the files write_file and edit_file name are kept: a shell command's effects are not"

// snapshotFiles keeps the files calls name (or, for an "after", those
// kept since the last one).
func (s *Store) snapshotFiles(session string, st *sessionState, reason string, calls []engine.ToolCall) (*engine.Checkpointed, error) {
	cp := &engine.Checkpointed{Mode: "files"}
	var paths []string
	for _, c := range calls {
		if c.Name == "run_shell" {
			cp.Note = noteShell
		}
		if !slices.Contains(fileTools, c.Name) {
			continue
		}
		var a struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(c.Args, &a) == nil && a.Path != "" && !slices.Contains(paths, a.Path) {
			paths = append(paths, a.Path)
		}
	}
	if reason == engine.CheckpointAfter {
		paths, st.touched = st.touched, nil
	} else {
		for _, p := range paths {
			if !slices.Contains(st.touched, p) {
				st.touched = append(st.touched, p)
			}
		}
	}
	root, err := os.OpenRoot(s.ws)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	for _, p := range paths {
		f, err := s.keepFile(root, p)
		if err != nil { // too big, out of the workspace, not a file: the others are kept
			switch {
			case errors.Is(err, errTooBig):
				cp.Skipped = append(cp.Skipped, p)
			case errors.Is(err, errNotRegular):
				cp.Special = append(cp.Special, p)
			default:
				cp.Note = strings.TrimPrefix(cp.Note+"; ", "; ") + fmt.Sprintf("%s not kept: %v", p, err)
			}
			continue
		}
		cp.Files = append(cp.Files, f)
		if prev, ok := st.last[f.Path]; ok && prev != f.Hash {
			cp.Changed = append(cp.Changed, f.Path)
		}
		if st.last == nil {
			st.last = map[string]string{}
		}
		st.last[f.Path] = f.Hash // "" for a missing file
	}
	return cp, nil
}

var (
	errTooBig     = errors.New("larger than the checkpoint limit")
	errNotRegular = errors.New("not a regular file")
)

// nonBlock opens a file that turned into a FIFO since it was looked at
// without waiting for a writer.
const nonBlock = syscall.O_NONBLOCK

// keepFile keeps the file at p (in the workspace root) in the store.
func (s *Store) keepFile(root *os.Root, p string) (engine.CheckpointFile, error) {
	rel := filepath.Clean(p)
	if filepath.IsAbs(rel) {
		r, err := filepath.Rel(s.ws, rel)
		if err != nil {
			return engine.CheckpointFile{}, err
		}
		rel = r
	}
	f := engine.CheckpointFile{Path: filepath.ToSlash(rel)}
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		f.Missing = true
		return f, nil
	}
	if err != nil {
		return f, err
	}
	if !fi.Mode().IsRegular() {
		return f, errNotRegular
	}
	if fi.Size() > s.maxFile {
		return f, errTooBig
	}
	in, err := root.OpenFile(rel, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return f, err
	}
	defer in.Close()
	data, err := io.ReadAll(io.LimitReader(in, s.maxFile+1))
	if err != nil {
		return f, err
	}
	sum := sha256.Sum256(data)
	f.Hash, f.Mode = hex.EncodeToString(sum[:]), uint32(fi.Mode().Perm())
	return f, s.putObject(f.Hash, data)
}

// objectPath is where the content of hash is kept.
func (s *Store) objectPath(hash string) string { return filepath.Join(s.dir, "files", hash[:2], hash) }

// putObject keeps data as hash, once.
func (s *Store) putObject(hash string, data []byte) error {
	p := s.objectPath(hash)
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// object reads the content kept as hash, checking it.
func (s *Store) object(hash string) ([]byte, error) {
	if len(hash) != 64 {
		return nil, fmt.Errorf("bad hash %q", hash)
	}
	data, err := os.ReadFile(s.objectPath(hash))
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != hash {
		return nil, fmt.Errorf("the kept content of %s is damaged", hash[:12])
	}
	return data, nil
}
