package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// A call is imported under agentty's name only when its arguments can be
// said in agentty's tool's own (the model of a fork reads them, and copies
// them); otherwise it keeps its own name.

// claudeArgs maps a Claude Code tool's arguments to those of agentty's
// tool of the same use: the name and arguments, and false when they do not
// fit (the call keeps its name and arguments).
func claudeArgs(name string, raw json.RawMessage) (string, json.RawMessage, bool) {
	var in map[string]any
	if json.Unmarshal(raw, &in) != nil {
		return "", nil, false
	}
	str := func(k string) (string, bool) { s, ok := in[k].(string); return s, ok }
	num := func(k string) (int, bool) { f, ok := in[k].(float64); return int(f), ok && f >= 1 }
	out := map[string]any{}
	switch name {
	case "Bash":
		cmd, ok := str("command")
		if !ok {
			return "", nil, false
		}
		out["command"] = cmd
		return "run_shell", marshal(out), true
	case "Read":
		p, ok := str("file_path")
		if !ok {
			return "", nil, false
		}
		out["path"] = p
		if off, ok := num("offset"); ok {
			out["start_line"] = off
			if n, ok := num("limit"); ok {
				out["end_line"] = off + n - 1
			}
		}
		return "read_file", marshal(out), true
	case "Write":
		p, ok1 := str("file_path")
		c, ok2 := str("content")
		if !ok1 || !ok2 {
			return "", nil, false
		}
		return "write_file", marshal(map[string]any{"path": p, "content": c}), true
	case "Edit":
		p, ok1 := str("file_path")
		o, ok2 := str("old_string")
		n, ok3 := str("new_string")
		if !ok1 || !ok2 || !ok3 {
			return "", nil, false
		}
		out = map[string]any{"path": p, "old": o, "new": n}
		if all, ok := in["replace_all"].(bool); ok && all {
			out["replace_all"] = true
		}
		return "edit_file", marshal(out), true
	case "Grep":
		pat, ok := str("pattern")
		if !ok {
			return "", nil, false
		}
		out["pattern"] = pat
		for _, k := range []string{"path", "glob"} {
			if v, ok := str(k); ok {
				out[k] = v
			}
		}
		return "search_files", marshal(out), true
	case "LS":
		if p, ok := str("path"); ok {
			out["path"] = p
		}
		return "list_dir", marshal(out), true
	case "WebFetch":
		u, ok := str("url")
		if !ok {
			return "", nil, false
		}
		return "http_get", marshal(map[string]any{"url": u}), true
	}
	return "", nil, false
}

func marshal(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// importedCall is a transcript's call as agentty journals it: under
// agentty's tool when its arguments fit, else under its own name made a
// valid function name.
func importedCall(name string, args json.RawMessage) (string, json.RawMessage) {
	if n, a, ok := claudeArgs(name, args); ok {
		return n, a
	}
	return ownName(name), args
}

// ownName is a tool's own name as a valid function name.
func ownName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteRune('_')
		}
	}
	return cmpOr(b.String()[:min(b.Len(), 64)], "tool")
}

// eachLine calls f with each line of r and its number (from 1), without
// its newline; a line over maxLine is not read, said in a note, and the
// rest go on.
func eachLine(r io.Reader, name string, notes *[]string, f func(n int, line []byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	over := false
	for n := 1; ; {
		chunk, err := br.ReadSlice('\n')
		if !over {
			if len(line)+len(chunk) > maxLine {
				over, line = true, line[:0]
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if over {
			*notes = append(*notes, fmt.Sprintf("%s:%d: not read: the line is longer than %d MiB", name, n, maxLine>>20))
		} else if l := bytes.TrimRight(line, "\r\n"); len(l) > 0 {
			f(n, l)
		}
		line, over = line[:0], false
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		n++
	}
}
