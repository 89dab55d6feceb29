// Package gittest holds what tests of several packages need of a git
// repository: a record of the whole of a repository's .git, to check that
// agentty left the person's repository as it was.
package gittest

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DotGit is every file under ws/.git (objects, refs, config, index, logs)
// with its mode and the hash of its bytes (a link's target), one a line:
// two records are equal only when the .git is byte for byte the same.
func DotGit(ws string) (string, error) {
	var b strings.Builder
	err := filepath.WalkDir(filepath.Join(ws, ".git"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		var data []byte
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			data = []byte(l)
		case fi.Mode().IsRegular():
			if data, err = os.ReadFile(p); err != nil {
				return err
			}
		}
		fmt.Fprintf(&b, "%s %v %x\n", p, fi.Mode(), sha256.Sum256(data))
		return nil
	})
	return b.String(), err
}
