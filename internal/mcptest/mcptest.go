// Package mcptest gives tests the real MCP server they run, installed on
// first use: server-everything, from tools/testdata/mcp's package-lock.json
// (npm ci), so that the README's test command passes on a fresh clone with
// Go, node and npm present and nothing installed beforehand.
package mcptest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// serverPath is where npm ci puts the server, under the folder of
// package.json.
const serverPath = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"

// Everything returns the path of server-everything's entry point,
// installing it with npm ci when it is missing. Packages' tests run at
// once: a lock file makes one install and the others wait for it. Without
// npm, or with an install that fails, the test fails with the command to
// run: a skip would let a regression of the MCP path pass a checkout.
// Without node, nothing can run the server: the test is skipped.
func Everything(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir, err := folder()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, serverPath)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if err := install(dir); err != nil {
		t.Fatalf("installing the MCP test server: %v\n(run npm ci --prefix tools/testdata/mcp from the repository's root; .ci/run does)", err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("npm ci in %s left no %s: %v", dir, serverPath, err)
	}
	return p
}

// folder is tools/testdata/mcp of the module the test runs in: the first
// folder up from the test's own with a go.mod.
func folder() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "tools", "testdata", "mcp"), nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", fmt.Errorf("no go.mod above the test's folder")
		}
		d = up
	}
}

// install runs npm ci in dir under an exclusive lock on a file beside it,
// unless another test's install finished while this one waited.
func install(dir string) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("npm is not installed")
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(filepath.Join(dir, serverPath)); err == nil {
		return nil // another package's test installed it
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci: %v\n%s", err, out)
	}
	return nil
}
