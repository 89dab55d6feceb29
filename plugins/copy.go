package plugins

// Copying a plugin's folder into the store: bounded in size and file
// count, no symbolic link followed out of the folder, nothing that is not
// a regular file or a folder copied (a FIFO, a device, a socket).

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentty/agentty/config"
)

// Bounds of one plugin's copy by default: a folder past them is refused
// whole (Store.MaxBytes and MaxFiles set others).
const (
	MaxBytes = 64 << 20
	MaxFiles = 5000
)

// bounds is a copy's limits.
type bounds struct{ bytes, files int64 }

// bounds are s's limits of a copy.
func (s Store) bounds() bounds {
	return bounds{bytes: cmp.Or(s.MaxBytes, MaxBytes), files: cmp.Or(s.MaxFiles, MaxFiles)}
}

// copyTree copies the folder src into dst (made; it must not exist),
// leaving out .git. A symbolic link is copied as the file it leads to
// when that is inside src (a folder it leads to is not followed, noted);
// one leading out of src refuses the whole copy. Anything not a regular
// file or a folder is left out, noted. Past MaxBytes or MaxFiles the copy
// is refused.
func copyTree(src, dst string, lim bounds) ([]string, error) {
	root, err := filepath.EvalSymlinks(src)
	if err != nil {
		return nil, err
	}
	var notes []string
	files, bytes := int64(0), int64(0)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out := filepath.Join(dst, rel)
		switch t := d.Type(); {
		case d.IsDir():
			if d.Name() == ".git" && p != root {
				return filepath.SkipDir
			}
			return os.MkdirAll(out, 0o700)
		case t&fs.ModeSymlink != 0:
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s: a broken symbolic link; not copied", rel))
				return nil
			}
			if r, err := filepath.Rel(root, target); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				return fmt.Errorf("%s: a symbolic link to %s, outside the plugin's folder: refused", rel, target)
			}
			fi, err := os.Stat(target)
			if err != nil {
				return err
			}
			if !fi.Mode().IsRegular() {
				notes = append(notes, fmt.Sprintf("%s: a symbolic link to a folder or special file; not followed", rel))
				return nil
			}
			p = target
		case !t.IsRegular():
			notes = append(notes, fmt.Sprintf("%s: not a regular file (%s); not copied", rel, t))
			return nil
		}
		files++
		if files > lim.files {
			return fmt.Errorf("more than %d files: refused (a plugin is small)", lim.files)
		}
		n, err := copyFile(p, out, lim.bytes-bytes)
		bytes += n
		return err
	})
	return notes, err
}

// errTooBig is a copy past its bound of bytes.
var errTooBig = errors.New("too large: refused (a plugin is small)")

// copyFile copies the regular file src to dst, at most max bytes (more is
// an error), keeping whether it is executable.
func copyFile(src, dst string, max int64) (int64, error) {
	in, err := config.OpenRegular(src) // never waits on a FIFO swapped in
	if err != nil {
		return 0, err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return 0, err
	}
	mode := os.FileMode(0o600)
	if fi.Mode()&0o100 != 0 {
		mode = 0o700
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, io.LimitReader(in, max+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > max {
		err = errTooBig
	}
	return n, err
}
