package cli

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"
)

// trustCmd runs `agentty trust [DIR] | --list | --revoke DIR`.
func trustCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("trust", stderr)
	list := fs.Bool("list", false, "list the trusted folders")
	revoke := fs.Bool("revoke", false, "stop trusting DIR")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty trust: "+format+"\n", a...)
		return code
	}
	if fs.NArg() > 1 || (*list && (*revoke || fs.NArg() > 0)) {
		return fail(app.ExitUsage, "usage: agentty trust [DIR] | --list | --revoke DIR")
	}
	store, err := config.LoadTrust(getenv)
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	if *list {
		if len(store.Folders) == 0 {
			fmt.Fprintln(stdout, "No folder is trusted.")
			return 0
		}
		for _, dir := range slices.Sorted(maps.Keys(store.Folders)) {
			f := store.Folders[dir]
			state := "trusted"
			switch w, err := config.ReadWorkspace(dir, &config.Settings{}); {
			case err != nil:
				state = "unreadable: " + err.Error()
			case w == nil && f.SHA256 != "":
				state = "its .agentty.json is gone"
			case w != nil && w.Sum != f.SHA256:
				state = "changed since trusted: trust it again to use it"
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\n", dir, f.TrustedAt.Local().Format("2006-01-02 15:04"), state)
		}
		return 0
	}
	if *revoke {
		if fs.NArg() != 1 {
			return fail(app.ExitUsage, "--revoke needs the folder: agentty trust --revoke DIR")
		}
		dir, err := app.RealDir(fs.Arg(0))
		if err != nil {
			return fail(app.ExitError, "%v", err)
		}
		ok, err := store.Revoke(dir)
		switch {
		case err != nil:
			return fail(app.ExitError, "%v", err)
		case !ok:
			return fail(app.ExitError, "%s was not trusted", dir)
		}
		fmt.Fprintf(stdout, "%s is no longer trusted.\n", dir)
		return 0
	}
	if err := app.TrustFolder(store, cmp.Or(fs.Arg(0), "."), stdout, getenv); err != nil {
		return fail(app.ExitError, "%v", err)
	}
	return 0
}
