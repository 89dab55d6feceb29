package plugins

// Git sources: cloned into a temporary folder, checked out at the ref
// asked for (a branch, a tag or a commit), pinned to the commit that is
// then HEAD, and copied as a folder is (bounded, no .git).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// CloneTimeout bounds a clone and its checkout: a server that never
// answers does not hold plugin add for ever.
const CloneTimeout = 10 * time.Minute

// gitURL matches what is cloned rather than copied: a URL git speaks
// (https, http, ssh, git, file) or scp-like user@host:path.
var gitURL = regexp.MustCompile(`^((https?|ssh|git|file)://|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:)`)

// githubShort is GitHub's owner/repo shorthand.
var githubShort = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*/[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// IsGit reports whether src names a git repository to clone (a URL, or
// github's owner/repo shorthand when no such folder is here).
func IsGit(src string) bool {
	if gitURL.MatchString(src) {
		return true
	}
	if _, err := os.Stat(src); err == nil {
		return false
	}
	return githubShort.MatchString(src)
}

// cloneURL is src as git clones it: owner/repo is GitHub's.
func cloneURL(src string) (string, error) {
	switch {
	case strings.HasPrefix(src, "-"):
		return "", fmt.Errorf("%q is not a repository", src)
	case gitURL.MatchString(src):
		return src, nil
	case githubShort.MatchString(src):
		return "https://github.com/" + strings.TrimSuffix(src, ".git") + ".git", nil
	}
	return "", fmt.Errorf("%q is not a git URL (https://, ssh://, git://, file://, user@host:path, or GitHub's owner/repo)", src)
}

// git runs git with args in dir: no hooks, no helper transports, no
// prompt for a password (a clone that needs one fails).
func git(ctx context.Context, dir string, args ...string) (string, error) {
	full := append([]string{"-c", "core.hooksPath=/dev/null", "-c", "protocol.ext.allow=never", "-c", "advice.detachedHead=false"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=/bin/false")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if len(msg) > 400 {
			msg = msg[:400] + "…"
		}
		return "", fmt.Errorf("git %s: %v: %s", args[0], err, msg)
	}
	return strings.TrimSpace(out.String()), nil
}

// clone clones url into the new folder dst, checks out ref (none: the
// default branch) and says the commit it is at.
func clone(ctx context.Context, url, ref, dst string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, CloneTimeout)
	defer cancel()
	if _, err := git(ctx, "", "clone", "--quiet", "--no-recurse-submodules", "--", url, dst); err != nil {
		return "", err
	}
	if ref != "" {
		if strings.HasPrefix(ref, "-") {
			return "", fmt.Errorf("--ref %q is not a branch, tag or commit", ref)
		}
		if _, err := git(ctx, dst, "checkout", "--quiet", "--detach", ref, "--"); err != nil {
			if _, err2 := git(ctx, dst, "checkout", "--quiet", "--detach", "origin/"+ref, "--"); err2 != nil {
				return "", fmt.Errorf("--ref %s: no such branch, tag or commit in %s (%v)", ref, url, err)
			}
		}
	}
	return git(ctx, dst, "rev-parse", "HEAD")
}
