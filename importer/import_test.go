package importer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// claudeFixture is a Claude Code transcript made by hand after the
// format's shape: a question answered with a tool (its blocks on lines of
// their own), a malformed line, a branch left behind by a rewind (u2a,
// not on the live chain), a sub-agent's sidechain, and a call the person
// interrupted (no result).
const claudeFixture = `{"type":"summary","summary":"Counting files","leafUuid":"a4"}
{"type":"user","uuid":"u1","parentUuid":null,"isSidechain":false,"sessionId":"c0ffee12-aaaa","cwd":"/work/proj","timestamp":"2026-11-30T10:00:00Z","message":{"role":"user","content":"how many go files are there?"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","isSidechain":false,"timestamp":"2026-11-30T10:00:02Z","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Let me count them."}],"usage":{"input_tokens":100,"output_tokens":10,"cache_read_input_tokens":50}}}
{"type":"assistant","uuid":"a1b","parentUuid":"a1","isSidechain":false,"timestamp":"2026-11-30T10:00:03Z","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls *.go | wc -l"}}]}}
this line is not JSON
{"type":"user","uuid":"r1","parentUuid":"a1b","isSidechain":false,"timestamp":"2026-11-30T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"42"}]}}
{"type":"assistant","uuid":"a2","parentUuid":"r1","isSidechain":false,"timestamp":"2026-11-30T10:00:07Z","message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"There are 42 Go files."}]}}
{"type":"user","uuid":"u2a","parentUuid":"a2","isSidechain":false,"timestamp":"2026-11-30T10:01:00Z","message":{"role":"user","content":"delete them all"}}
{"type":"user","uuid":"u2","parentUuid":"a2","isSidechain":false,"timestamp":"2026-11-30T10:02:00Z","message":{"role":"user","content":"read main.go then"}}
{"type":"assistant","uuid":"s1","parentUuid":"u2","isSidechain":true,"timestamp":"2026-11-30T10:02:01Z","message":{"id":"msg_s","role":"assistant","content":[{"type":"text","text":"sub-agent thinking"}]}}
{"type":"assistant","uuid":"a3","parentUuid":"u2","isSidechain":false,"timestamp":"2026-11-30T10:02:02Z","message":{"id":"msg_3","role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"main.go"}},{"type":"tool_use","id":"toolu_3","name":"mcp__github__get_issue","input":{"n":1}}]}}
{"type":"user","uuid":"r3","parentUuid":"a3","isSidechain":false,"timestamp":"2026-11-30T10:02:04Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"package main"}]}]}}
{"type":"assistant","uuid":"a4","parentUuid":"r3","isSidechain":false,"timestamp":"2026-11-30T10:02:09Z","message":{"id":"msg_4","role":"assistant","content":[{"type":"text","text":"It is package main."}]}}
`

// runTasks are the tasks of a session's top-level runs.
func runTasks(l *sessions.Loaded) []string {
	var tasks []string
	for _, ev := range l.Events {
		if d, ok := ev.Data.(*engine.RunStarted); ok && ev.ParentRun == "" {
			tasks = append(tasks, d.Task)
		}
	}
	return tasks
}

func importInto(t *testing.T, tr *Transcript) *sessions.Loaded {
	t.Helper()
	store, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id, err := Import(context.Background(), store, tr)
	if err != nil {
		t.Fatal(err)
	}
	l, err := store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestImportClaude: the live chain becomes two runs, with their tool calls
// under agentty's names (others kept), results as observations, the
// interrupted call failed, usage, the transcript's times; what was left
// out is said.
func TestImportClaude(t *testing.T) {
	tr, err := ReadClaude(strings.NewReader(claudeFixture), "s.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(tr.Notes, "\n")
	if !strings.Contains(notes, "s.jsonl:5: not read") || !strings.Contains(notes, "2 lines of other branches or of sub-agents") {
		t.Errorf("notes:\n%s", notes)
	}
	if tr.ID != "c0ffee12-aaaa" || tr.Cwd != "/work/proj" {
		t.Fatalf("transcript: %+v", tr)
	}
	l := importInto(t, tr)
	if tasks := runTasks(l); tr.Runs != 2 || strings.Join(tasks, "|") != "how many go files are there?|read main.go then" {
		t.Fatalf("%d runs: %q", tr.Runs, tasks)
	}
	var calls []string
	var finished []*engine.ToolFinished
	for _, ev := range l.Events {
		switch d := ev.Data.(type) {
		case *engine.ToolStarted:
			calls = append(calls, d.Name+" "+string(d.Args))
		case *engine.ToolFinished:
			finished = append(finished, d)
		}
	}
	if strings.Join(calls, "|") != `run_shell {"command":"ls *.go | wc -l"}|read_file {"path":"main.go"}|mcp__github__get_issue {"n":1}` {
		t.Errorf("calls: %v", calls)
	}
	if len(finished) != 3 || finished[0].Result != "42" || finished[1].Result != "package main" || finished[2].Status == engine.ToolOK || !strings.Contains(finished[2].Error, "interrupted") {
		t.Errorf("results: %+v", finished)
	}
	msgs := l.Session.History
	if got := msgs[len(msgs)-1].Content; got != "It is package main." {
		t.Errorf("the last answer %q", got)
	}
	if !strings.HasPrefix(l.Meta.Origin, "import:claude@") || l.Meta.Workspace != "/work/proj" || !strings.Contains(l.Meta.Title, "[claude c0ffee12]") || l.Meta.Usage.CachedTokens != 50 || l.Meta.Usage.PromptTokens < 150 || l.Meta.Usage.Cost <= 0 {
		t.Errorf("meta %+v", l.Meta)
	}
	if first := l.Events[0].Time.UTC().Format("15:04:05"); first != "10:00:00" {
		t.Errorf("the first event's time %s, want the transcript's", first)
	}
}

// codexFixture is a Codex rollout made by hand after the format's shape:
// the session's meta, Codex's own context message (left), a question,
// reasoning, a short message before a shell call (the same decision),
// the call and its output, an answer, and a line that is not one of the
// format.
const codexFixture = `{"timestamp":"2026-11-30T09:00:00Z","type":"session_meta","payload":{"id":"0199-abcd","cwd":"/work/other","model":"gpt-5-codex"}}
{"timestamp":"2026-11-30T09:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd</environment_context>"}]}}
{"timestamp":"2026-11-30T09:00:02Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"list the files"}]}}
{"timestamp":"2026-11-30T09:00:03Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"I will run ls."}]}}
{"timestamp":"2026-11-30T09:00:03Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Listing them."}]}}
{"timestamp":"2026-11-30T09:00:04Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"]}","call_id":"call_1"}}
{"timestamp":"2026-11-30T09:00:05Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"a.go\\nb.go\\n\",\"metadata\":{\"exit_code\":0}}"}}
{"timestamp":"2026-11-30T09:00:06Z","type":"event_msg","payload":{"type":"agent_message","message":"There are two files."}}
[1,2,3]
{"timestamp":"2026-11-30T09:00:07Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"There are two files: a.go and b.go."}]}}
`

// TestImportCodex: a rollout becomes a run whose shell call is run_shell
// with its command, its output an observation, its answer the run's.
func TestImportCodex(t *testing.T) {
	tr, err := ReadCodex(strings.NewReader(codexFixture), "rollout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	l := importInto(t, tr)
	if tasks := runTasks(l); !strings.Contains(strings.Join(tr.Notes, "\n"), "rollout.jsonl:9: not read") || tr.Runs != 1 || strings.Join(tasks, "|") != "list the files" {
		t.Fatalf("notes %q, %d runs %q", tr.Notes, tr.Runs, tasks)
	}
	var got []string
	for _, ev := range l.Events {
		switch d := ev.Data.(type) {
		case *engine.ToolStarted:
			got = append(got, d.Name+" "+string(d.Args))
		case *engine.ToolFinished:
			got = append(got, d.Result)
		case *engine.RunFinished:
			got = append(got, d.Answer)
		}
	}
	if strings.Join(got, "|") != `run_shell {"command":"ls"}|a.go`+"\n"+`b.go`+"\n"+`|There are two files: a.go and b.go.` {
		t.Errorf("events: %q", got)
	}
	if !strings.HasPrefix(l.Meta.Origin, "import:codex@") || l.Meta.Workspace != "/work/other" || l.Meta.Model != "codex:gpt-5-codex" {
		t.Errorf("meta %+v", l.Meta)
	}
}

// TestImportKeepsGoing: a line over the limit is named and left, the rest
// imported; Claude Code's calls come in agentty's arguments when they fit
// (Edit's file_path, old_string, new_string as path, old, new), and keep
// their own otherwise; Claude Code's interruption mark is no message of
// the person's.
func TestImportKeepsGoing(t *testing.T) {
	huge := `{"type":"user","uuid":"x","message":{"role":"user","content":"` + strings.Repeat("a", maxLine) + `"}}`
	src := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","message":{"role":"user","content":"fix the add"}}
` + huge + `
{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":"calc.py","old_string":"a - b","new_string":"a + b"}},{"type":"tool_use","id":"t2","name":"MultiEdit","input":{"file_path":"calc.py","edits":[]}}]}}
{"type":"user","uuid":"r1","parentUuid":"a1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}
{"type":"user","uuid":"i1","parentUuid":"r1","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]}}
`
	tr, err := ReadClaude(strings.NewReader(src), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	l := importInto(t, tr)
	if !strings.Contains(strings.Join(tr.Notes, "\n"), "t.jsonl:2: not read: the line is longer than 16 MiB") || tr.Runs != 1 {
		t.Fatalf("notes %v, %d runs", tr.Notes, tr.Runs)
	}
	var calls []*engine.ToolStarted
	for _, ev := range l.Events {
		if d, ok := ev.Data.(*engine.ToolStarted); ok {
			calls = append(calls, d)
		}
	}
	if len(calls) != 2 || calls[0].Name != "edit_file" || string(calls[0].Args) != `{"new":"a + b","old":"a - b","path":"calc.py"}` || calls[1].Name != "MultiEdit" {
		t.Errorf("calls %+v", calls)
	}
}

// compactFixture is Claude Code 2.x's shape around /compact, where no real
// file committed publicly has one: system lines (turn_duration) on the
// chain, a compact_boundary whose parentUuid is null and whose
// logicalParentUuid names the last line before it, the summary Claude Code
// wrote as the person's (isCompactSummary), a local command's caveat
// (isMeta), its record and output, and the person's next words.
const compactFixture = `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"c0mpac7","timestamp":"2026-10-01T10:00:00Z","message":{"role":"user","content":"fix the bug"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","timestamp":"2026-10-01T10:00:05Z","message":{"id":"m1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Fixed."}],"usage":{"input_tokens":10,"output_tokens":2}}}
{"type":"system","subtype":"turn_duration","uuid":"s1","parentUuid":"a1","durationMs":5000}
{"type":"system","subtype":"compact_boundary","uuid":"cb","parentUuid":null,"logicalParentUuid":"s1","content":"Conversation compacted","compactMetadata":{"trigger":"manual","preTokens":9000}}
{"type":"user","uuid":"cs","parentUuid":"cb","isCompactSummary":true,"isVisibleInTranscriptOnly":true,"message":{"role":"user","content":"This session is being continued from a previous conversation that ran out of context. Summary: a bug was fixed."}}
{"type":"user","uuid":"mt","parentUuid":"cs","isMeta":true,"message":{"role":"user","content":"Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages."}}
{"type":"user","uuid":"cm","parentUuid":"mt","message":{"role":"user","content":"<command-name>/cost</command-name>\n<command-message>cost</command-message>\n<command-args></command-args>"}}
{"type":"user","uuid":"co","parentUuid":"cm","message":{"role":"user","content":"<local-command-stdout>Total cost: $0.01</local-command-stdout>"}}
{"type":"user","uuid":"u2","parentUuid":"co","timestamp":"2026-10-01T11:00:00Z","message":{"role":"user","content":"now add a test"}}
{"type":"assistant","uuid":"a2","parentUuid":"u2","timestamp":"2026-10-01T11:00:09Z","message":{"id":"m2","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Added."}],"usage":{"input_tokens":20,"output_tokens":3}}}
`

// TestImportAcrossACompaction: the chain goes on across /compact through
// logicalParentUuid; the summary, the caveat and a local command are not
// the person's words; the session's times are the transcript's.
func TestImportAcrossACompaction(t *testing.T) {
	tr, err := ReadClaude(strings.NewReader(compactFixture), "c.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	l := importInto(t, tr)
	if tasks := runTasks(l); strings.Join(tasks, "|") != "fix the bug|now add a test" {
		t.Errorf("runs %q, want both prompts and nothing else", tasks)
	}
	if !strings.Contains(strings.Join(tr.Notes, "\n"), "1 compaction summaries") {
		t.Errorf("notes %q", tr.Notes)
	}
	if l.Meta.Created.Format(time.RFC3339) != "2026-10-01T10:00:00Z" || l.Meta.Updated.Format(time.RFC3339) != "2026-10-01T11:00:09Z" {
		t.Errorf("the session's times %v – %v, want the transcript's", l.Meta.Created, l.Meta.Updated)
	}
	if l.Meta.Usage.PromptTokens != 30 || l.Meta.Usage.CompletionTokens != 5 || l.Meta.Usage.Estimated {
		t.Errorf("usage %+v, want the recorded 30 in and 5 out", l.Meta.Usage)
	}
}

// TestImportOlderCodex: a rollout of the format before the payload
// wrapper (a first line of the session, then the items themselves, and
// state records) is read, not refused.
func TestImportOlderCodex(t *testing.T) {
	const old = `{"id":"0197-old","timestamp":"2025-06-01T10:00:00Z","instructions":null}
{"record_type":"state"}
{"type":"message","role":"user","content":[{"type":"input_text","text":"<user_instructions>be brief</user_instructions>"}]}
{"type":"message","role":"user","content":[{"type":"input_text","text":"count the files"}]}
{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls | wc -l\"]}","call_id":"call_9"}
{"type":"function_call_output","call_id":"call_9","output":{"content":"3","success":true}}
{"record_type":"state"}
{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Three."}]}
`
	tr, err := ReadCodex(strings.NewReader(old), "old.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	l := importInto(t, tr)
	var got []string
	for _, ev := range l.Events {
		switch d := ev.Data.(type) {
		case *engine.RunStarted:
			got = append(got, d.Task)
		case *engine.ToolStarted:
			got = append(got, d.Name+" "+string(d.Args))
		case *engine.ToolFinished:
			got = append(got, d.Result)
		case *engine.RunFinished:
			got = append(got, d.Answer)
		}
	}
	if tr.ID != "0197-old" || strings.Join(got, "|") != `count the files|run_shell {"command":"ls | wc -l"}|3|Three.` {
		t.Errorf("id %q, events %q, notes %q", tr.ID, got, tr.Notes)
	}
}
