package bus

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// UsersConfig is u with the roles (roles.go) as a nats-server
// configuration's authorization block: what agentty serve requires of its
// clients, for the nodes of a cluster to require the same (each node's
// config includes it). The operator may do everything; the worker and
// submit users what their roles give them, replies only to a request
// received, once.
func UsersConfig(u Users) string {
	var b strings.Builder
	b.WriteString("# agentty's users and their roles (agentty queue users; docs/scale-out.md has the table).\n")
	b.WriteString("# It holds passwords: keep it 0600, and include it in each node's config.\n")
	b.WriteString("authorization {\n  users = [\n")
	fmt.Fprintf(&b, "    {user: %s, password: %s}\n", quote(u.Operator.User), quote(u.Operator.Password))
	for _, r := range []struct {
		c    Credential
		role Role
	}{{u.Worker, WorkerRole}, {u.Submit, SubmitRole}} {
		if r.c.User == "" {
			continue
		}
		fmt.Fprintf(&b, "    {user: %s, password: %s, permissions: {\n", quote(r.c.User), quote(r.c.Password))
		fmt.Fprintf(&b, "      publish: {allow: %s}\n", quoteAll(r.role.Publish))
		fmt.Fprintf(&b, "      subscribe: {allow: %s}\n", quoteAll(r.role.Subscribe))
		p := r.role.permissions().Response
		fmt.Fprintf(&b, "      allow_responses: {max: %d, expires: %s}\n    }}\n", p.MaxMsgs, quote(p.Expires.String()))
	}
	b.WriteString("  ]\n}\n")
	return b.String()
}

// quote is s as a quoted string of the config (no variable is expanded
// in one: "$JS.API.>" stays as it is).
func quote(s string) string {
	return strconv.Quote(s)
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// MappingsConfig is l's subject mappings (Layout.Mappings) as a
// nats-server configuration's mappings block, for the global account
// (the users of UsersConfig): a client that publishes a session's
// documented subjects lands in its partition. Empty for one partition.
func MappingsConfig(l Layout) string {
	m := l.Mappings()
	if len(m) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# the documented subjects of a session mapped to its partition (of %d)\nmappings = {\n", l.K)
	for _, src := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "  %s: %s\n", quote(src), quote(m[src]))
	}
	b.WriteString("}\n")
	return b.String()
}
