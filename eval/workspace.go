package eval

// A case's workspace: a folder of fixtures beside the suite, copied into
// a fresh folder for each run. The copy reads through an os.Root of the
// fixture folder (no .., no symlink leads out of it), refuses what is not
// a regular file or a folder, and is bounded in files and bytes.

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/agentty/agentty/config"
)

// The bounds of a workspace's copy.
const (
	maxFixtureBytes = 32 << 20
	maxFixtureFiles = 4096
)

// copyFixture copies the folder rel of the folder suiteDir into dst (an
// empty folder).
func copyFixture(suiteDir, rel, dst string) error {
	top, err := os.OpenRoot(suiteDir)
	if err != nil {
		return err
	}
	defer top.Close()
	src, err := top.OpenRoot(rel)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", rel, err)
	}
	defer src.Close()
	out, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	c := fixtureCopy{src: src, out: out, name: rel}
	return fs.WalkDir(src.FS(), ".", c.each)
}

// fixtureCopy is a copy under way: what it has copied so far.
type fixtureCopy struct {
	src, out     *os.Root
	name         string // the fixture folder, for errors
	files, bytes int
}

func (c *fixtureCopy) each(path string, d fs.DirEntry, err error) error {
	if err != nil {
		return fmt.Errorf("workspace %s: %w", c.name, err)
	}
	if path == "." {
		return nil
	}
	if c.files++; c.files > maxFixtureFiles {
		return fmt.Errorf("workspace %s: refused: more than %d files", c.name, maxFixtureFiles)
	}
	switch t := d.Type(); {
	case t.IsDir():
		return c.out.Mkdir(path, 0o700)
	case t.IsRegular(), t&fs.ModeSymlink != 0:
		return c.copy(path, t&fs.ModeSymlink != 0)
	default:
		return fmt.Errorf("workspace %s: %s", c.name, (&config.NotRegularError{Path: path, Mode: t}).Error())
	}
}

// copy copies the file path, following a symlink only within the fixture
// folder (the root refuses one that leads out).
func (c *fixtureCopy) copy(path string, link bool) error {
	in, err := c.src.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil && link {
		return fmt.Errorf("workspace %s: refused: %s is a link that leads out of the folder (%v)", c.name, path, err)
	}
	if err != nil {
		return fmt.Errorf("workspace %s: %w", c.name, err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("workspace %s: %s", c.name, (&config.NotRegularError{Path: path, Mode: st.Mode()}).Error())
	}
	f, err := c.out.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm()|0o600)
	if err != nil {
		return err
	}
	left := int64(maxFixtureBytes - c.bytes)
	n, err := io.Copy(f, io.LimitReader(in, left+1))
	c.bytes += int(n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > left {
		err = fmt.Errorf("refused: larger than %d MiB in all", maxFixtureBytes>>20)
	}
	if err != nil {
		return fmt.Errorf("workspace %s: %s: %w", c.name, path, err)
	}
	return nil
}
