package importer

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
)

// counts are what a transcript holds on its live conversation, and what an
// import of it journaled.
type counts struct {
	Prompts, Answers, Calls, Paired int
	Model                           string
	In, Out                         int // recorded usage: tokens in (cache included) and out
}

// realFiles are the transcripts and rollouts the real tools wrote, as
// public projects committed them (testdata/real/README.md says whose).
func realFiles(t *testing.T) []string {
	var files []string
	filepath.WalkDir(filepath.Join("testdata", "real"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) < 10 {
		t.Fatalf("%d real files under testdata/real", len(files))
	}
	return files
}

// TestRealTranscriptsLoseNothing: every real Claude Code transcript and
// Codex rollout imports with the prompts, the assistant's messages, the
// tool calls (each with its result where the file has one), the model and
// the recorded usage that a reference reader, written apart from the
// importer, counts on its live conversation.
func TestRealTranscriptsLoseNothing(t *testing.T) {
	var table []string
	for _, path := range realFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			codex := strings.Contains(path, "/codex/")
			var want counts
			if codex {
				want = refCodex(t, path)
			} else {
				want = refClaude(t, path)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var tr *Transcript
			if codex {
				tr, err = ReadCodex(f, path)
			} else {
				tr, err = ReadClaude(f, path)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := importedCounts(t, tr)
			table = append(table, filepath.Base(path)+"\t"+show(want)+"\t"+show(got))
			if got != want {
				t.Errorf("imported %+v\nwant     %+v\nnotes: %q", got, want, tr.Notes)
			}
		})
	}
	t.Logf("file\texpected\timported\n%s", strings.Join(table, "\n"))
}

func show(c counts) string {
	b, _ := json.Marshal(c)
	return string(b)
}

// importedCounts imports tr and counts what its journal holds.
func importedCounts(t *testing.T, tr *Transcript) counts {
	t.Helper()
	l := importInto(t, tr)
	var c counts
	for _, ev := range l.Events {
		if ev.ParentRun != "" {
			continue
		}
		switch d := ev.Data.(type) {
		case *engine.RunStarted:
			c.Prompts++
		case *engine.Decided:
			if d.Text != "(the transcript ends here)" && (tr.Source == "claude" || d.Text != "") {
				c.Answers++ // Claude Code's messages, each a decision; Codex's messages of text
			}
		case *engine.ToolStarted:
			c.Calls++
		case *engine.ToolFinished:
			if strings.Contains(d.Error, "no result of this call") && os.Getenv("DEBUG_UNPAIRED") != "" {
				t.Logf("unpaired %s %s", d.ID, d.Name)
			}
			if !strings.Contains(d.Error, "no result of this call") {
				c.Paired++
			}
		}
	}
	if !l.Meta.Usage.Estimated {
		c.In, c.Out = l.Meta.Usage.PromptTokens, l.Meta.Usage.CompletionTokens
	}
	_, c.Model, _ = strings.Cut(l.Meta.Model, ":")
	if c.Model == "unknown" {
		c.Model = ""
	}
	return c
}

// jsonLines reads a file's lines as generic JSON objects (a line that is
// not one is skipped).
func jsonLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	var out []map[string]any
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }
func obj(m map[string]any, k string) map[string]any {
	o, _ := m[k].(map[string]any)
	return o
}
func num(m map[string]any, k string) int { f, _ := m[k].(float64); return int(f) }

var commandName = regexp.MustCompile(`<command-name>`)

// refClaude counts a Claude Code transcript's live conversation: the chain
// from its last line that is not a sub-agent's (any line with a uuid) back
// through parentUuid, or logicalParentUuid where a compaction cut it.
func refClaude(t *testing.T, path string) counts {
	chain, results := refChain(jsonLines(t, path))
	return refCount(chain, results)
}

// refChain is the live chain of a transcript's lines, and the ids of the
// calls that have a result anywhere in it.
func refChain(lines []map[string]any) ([]map[string]any, map[string]bool) {
	byID := map[string]map[string]any{}
	var last map[string]any
	results := map[string]bool{}
	for _, l := range lines {
		if str(l, "type") == "user" {
			if blocks, ok := obj(l, "message")["content"].([]any); ok {
				for _, b := range blocks {
					if bm, _ := b.(map[string]any); str(bm, "type") == "tool_result" {
						results[str(bm, "tool_use_id")] = true
					}
				}
			}
		}
		if u := str(l, "uuid"); u != "" {
			byID[u] = l
			if l["isSidechain"] != true || last == nil || last["isSidechain"] == true {
				last = l
			}
		}
	}
	var chain []map[string]any
	for l, seen := last, map[string]bool{}; l != nil && !seen[str(l, "uuid")]; {
		seen[str(l, "uuid")] = true
		chain = append([]map[string]any{l}, chain...)
		next := str(l, "parentUuid")
		if next == "" {
			next = str(l, "logicalParentUuid")
		}
		l = byID[next]
	}
	return chain, results
}

// refCount counts the prompts, messages, calls, results, model and usage
// of a live chain.
func refCount(chain []map[string]any, results map[string]bool) counts {
	last := map[string]any{}
	if len(chain) > 0 {
		last = chain[len(chain)-1]
	}
	var c counts
	answers, usage := map[string]bool{}, map[string]map[string]any{}
	calls := map[string]bool{}
	command := false
	for _, l := range chain {
		m := obj(l, "message")
		switch str(l, "type") {
		case "user":
			text := str(m, "content")
			if blocks, ok := m["content"].([]any); ok {
				for _, b := range blocks {
					if bm, _ := b.(map[string]any); str(bm, "type") == "text" {
						text += str(bm, "text")
					}
				}
			}
			text = strings.TrimSpace(text)
			switch {
			case text == "" || l["isMeta"] == true || l["isCompactSummary"] == true || strings.HasPrefix(text, "[Request interrupted"):
			case commandName.MatchString(text) && (strings.HasPrefix(text, "<command-")):
				command = true
			case strings.HasPrefix(text, "<local-command-"):
				command = false
			default:
				c.Prompts++
				command = false
			}
		case "assistant":
			if command || c.Prompts == 0 && last["isSidechain"] == true {
				c.Prompts++ // a command the model answered; a sub-agent's transcript that begins with its answer
				command = false
			}
			if c.Prompts == 0 {
				continue
			}
			id := str(m, "id")
			answers[id] = true
			if u := obj(m, "usage"); u != nil {
				usage[id] = u
			}
			if mod := str(m, "model"); mod != "" && mod != "<synthetic>" {
				c.Model = mod
			}
			blocks, _ := m["content"].([]any)
			for _, b := range blocks {
				if bm, _ := b.(map[string]any); str(bm, "type") == "tool_use" && !calls[str(bm, "id")] {
					calls[str(bm, "id")] = true
					c.Calls++
					if results[str(bm, "id")] {
						c.Paired++
					}
				}
			}
		}
	}
	c.Answers = len(answers)
	for _, u := range usage {
		c.In += num(u, "input_tokens") + num(u, "cache_read_input_tokens") + num(u, "cache_creation_input_tokens")
		c.Out += num(u, "output_tokens")
	}
	return c
}

// refCodex counts a Codex rollout: the person's messages (user_message
// events), the assistant's messages, the calls of every kind and their
// outputs, the last turn's model, and the usage of the last token_count.
func refCodex(t *testing.T, path string) counts {
	var c counts
	outputs, calls := map[string]bool{}, []string{}
	var total map[string]any
	for _, l := range jsonLines(t, path) {
		p := obj(l, "payload")
		switch str(l, "type") + "/" + str(p, "type") {
		case "event_msg/user_message":
			c.Prompts++
		case "event_msg/token_count":
			if info := obj(p, "info"); info != nil {
				total = obj(info, "total_token_usage")
			}
		case "turn_context/":
			if m := str(p, "model"); m != "" {
				c.Model = m
			}
		case "response_item/message":
			if str(p, "role") == "assistant" && c.Prompts > 0 {
				c.Answers++
			}
		case "response_item/function_call", "response_item/custom_tool_call", "response_item/local_shell_call":
			calls = append(calls, str(p, "call_id"))
		case "response_item/web_search_call":
			calls = append(calls, "search")
			outputs["search"] = true // nothing to pair: Codex keeps no results of its searches
		case "response_item/function_call_output", "response_item/custom_tool_call_output":
			outputs[str(p, "call_id")] = true
		}
	}
	c.Calls = len(calls)
	for _, id := range calls {
		if outputs[id] {
			c.Paired++
		}
	}
	if total != nil {
		c.In, c.Out = num(total, "input_tokens"), num(total, "output_tokens")
	}
	return c
}
