package sessions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/engine/script"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/tools"
)

func newEngine(t testing.TB, turns string) *engine.Engine {
	t.Helper()
	m, err := script.Parse("test", []byte(`{"turns":[`+turns+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	return engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, tools.Builtins()...), ModelName: "script"})
}

const rememberTurns = `{"tool_calls":[{"name":"remember","arguments":{"key":"name","value":"Ada"}},{"name":"calculator","arguments":{"expression":"6*7"}}]},
	{"tool_calls":[{"name":"clock"}]},{"answer":"done"}`

// journaledRun runs turns in a new session of store and returns its id and
// the live session.
func journaledRun(t *testing.T, store *sessions.Store, turns string) (string, *engine.Session) {
	t.Helper()
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewSession(j.ID)
	if res := newEngine(t, turns).Run(context.Background(), s, "remember my name", j); res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %s %v", res.StopReason, res.Err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return j.ID, s
}

func TestJournalReplaysExactly(t *testing.T) {
	store, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id, live := journaledRun(t, store, rememberTurns)
	j, l, err := store.OpenWriter(id)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	got := l.Session
	if !reflect.DeepEqual(got.History, live.History) || !reflect.DeepEqual(got.Memory(), live.Memory()) ||
		got.Steps != live.Steps || got.Usage != live.Usage || got.Runs != live.Runs || got.Interrupted() {
		t.Errorf("replayed session differs:\n got %+v %v %d %+v\nwant %+v %v %d %+v", got.History, got.Memory(), got.Steps, got.Usage, live.History, live.Memory(), live.Steps, live.Usage)
	}
	m := l.Meta
	if m.Title != "remember my name" || m.Model != "script" || m.LastStep != 3 || m.Runs != 1 || m.Interrupted || m.Created.IsZero() {
		t.Errorf("meta = %+v", m)
	}
	for _, ev := range l.Events {
		if ev.Kind == engine.KindTextDelta {
			t.Errorf("text_delta journaled")
		}
	}
	// A second run continues the session, and is journaled after the first.
	res := newEngine(t, `{"answer":"again"}`).Run(context.Background(), l.Session, "and again", j)
	if res.StopReason != engine.StopAnswered {
		t.Fatal(res.Err)
	}
	j.Close()
	l2, err := store.Load(id)
	if err != nil || l2.Session.Runs != 2 || l2.Meta.Runs != 2 || len(l2.Session.History) != len(live.History)+2 {
		t.Errorf("after a second run: %v, runs %d, %d messages", err, l2.Session.Runs, len(l2.Session.History))
	}
}

func TestPermissions(t *testing.T) {
	home := t.TempDir()
	store, _ := sessions.Open(home)
	id, _ := journaledRun(t, store, rememberTurns)
	for path, want := range map[string]os.FileMode{
		filepath.Join(home, "sessions"):                     0o700,
		filepath.Join(home, "sessions", id):                 0o700,
		filepath.Join(home, "sessions", id, "events.jsonl"): 0o600,
		filepath.Join(home, "sessions", id, "meta.json"):    0o600,
	} {
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", path, st.Mode().Perm(), err, want)
		}
	}
}

func TestOneWriter(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	id, _ := journaledRun(t, store, rememberTurns)
	j, _, err := store.OpenWriter(id)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.OpenWriter(id); !errors.Is(err, sessions.ErrLocked) || !strings.Contains(err.Error(), "open in another agentty") {
		t.Errorf("second writer: %v, want ErrLocked", err)
	}
	if err := store.Remove(id); !errors.Is(err, sessions.ErrLocked) {
		t.Errorf("rm while open: %v, want ErrLocked", err)
	}
	if l, err := store.Load(id); err != nil || l.Session.Steps != 3 {
		t.Errorf("a reader could not read a locked session: %v", err)
	}
	j.Close()
	if j2, _, err := store.OpenWriter(id); err != nil {
		t.Errorf("after close: %v", err)
	} else {
		j2.Close()
	}
}

func TestDamagedJournals(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	good, _ := journaledRun(t, store, rememberTurns)
	raw, _ := os.ReadFile(store.JournalPath(good))
	lines := bytes.SplitAfter(raw, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty piece after the last newline

	// A torn last line is dropped with a warning, kept aside, and cut off.
	torn, _ := journaledRun(t, store, rememberTurns)
	tornBytes := []byte(`{"v":1,"session":"x","kind":"step_sta`)
	appendFile(t, store.JournalPath(torn), tornBytes)
	j, l, err := store.OpenWriter(torn)
	if err != nil {
		t.Fatalf("torn: %v", err)
	}
	if len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "incomplete") || l.Session.Steps != 3 {
		t.Errorf("torn: warnings %v, steps %d", l.Warnings, l.Session.Steps)
	}
	if err := newEngine(t, `{"answer":"ok"}`).Run(context.Background(), l.Session, "more", j).Err; err != nil {
		t.Fatal(err)
	}
	j.Close()
	if l, err := store.Load(torn); err != nil || len(l.Warnings) != 0 || l.Session.Runs != 2 {
		t.Errorf("after appending to a repaired journal: %v %v", err, l.Warnings)
	}
	if kept, _ := os.ReadFile(filepath.Join(store.Dir(), torn, "events.jsonl.torn")); !bytes.Equal(kept, tornBytes) {
		t.Errorf("torn bytes not kept aside: %q", kept)
	}

	// A corrupt line in the middle is an error naming file and line; what
	// comes before it still loads; a writer is refused.
	bad, _ := journaledRun(t, store, rememberTurns)
	var b []byte
	for i, ln := range lines {
		if i == 5 {
			ln = []byte("{garbage\n")
		}
		b = append(b, ln...)
	}
	os.WriteFile(store.JournalPath(bad), b, 0o600)
	l, err = store.Load(bad)
	var ce *sessions.CorruptError
	if !errors.As(err, &ce) || ce.Line != 6 || !strings.Contains(err.Error(), "events.jsonl line 6") || len(l.Events) != 5 {
		t.Errorf("corrupt: err %v, %d events", err, len(l.Events))
	}
	if _, _, err := store.OpenWriter(bad); !errors.As(err, &ce) {
		t.Errorf("writer opened a corrupt journal: %v", err)
	}

	// An event of an unknown kind is kept and skipped.
	unknown, _ := journaledRun(t, store, rememberTurns)
	b = nil
	for i, ln := range lines {
		if i == 3 {
			b = append(b, []byte(`{"v":2,"session":"x","run":"run-1","step":1,"kind":"hologram","time":"2026-01-01T00:00:00Z","data":{"x":1}}`+"\n")...)
		}
		b = append(b, ln...)
	}
	os.WriteFile(store.JournalPath(unknown), b, 0o600)
	l, err = store.Load(unknown)
	if err != nil || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], `unknown event kind "hologram"`) || l.Session.Steps != 3 {
		t.Errorf("unknown kind: %v %v", err, l.Warnings)
	}

	// One bad session never stops ls.
	list, err := store.List()
	if err != nil || len(list) != 4 {
		t.Fatalf("ls: %v, %d sessions", err, len(list))
	}
	for _, row := range list {
		if (row.ID == bad) != (row.Err != nil) && row.Title == "" {
			t.Errorf("ls row %+v", row)
		}
	}
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(b)
	f.Close()
}

func TestMetaIsRebuilt(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	id, _ := journaledRun(t, store, rememberTurns)
	os.Remove(filepath.Join(store.Dir(), id, "meta.json"))
	m, err := store.Meta(id)
	if err != nil || m.Title != "remember my name" || m.LastStep != 3 || m.Runs != 1 {
		t.Errorf("rebuilt meta = %+v, %v", m, err)
	}
	if err := store.Rename(id, "Ada's session"); err != nil {
		t.Fatal(err)
	}
	if m, _ := store.Meta(id); m.Title != "Ada's session" {
		t.Errorf("renamed title = %q", m.Title)
	}
	if _, err := store.Meta("nope"); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("missing session: %v", err)
	}
	if _, err := store.Load("../etc"); err == nil {
		t.Errorf("a path was accepted as a session id")
	}
}

func TestForkAndExport(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	id, _ := journaledRun(t, store, rememberTurns)
	fork, err := store.Fork(id, 1)
	if err != nil {
		t.Fatal(err)
	}
	l, err := store.Load(fork)
	if err != nil {
		t.Fatal(err)
	}
	if l.Session.Steps != 1 || !l.Session.Interrupted() || len(l.Session.Memory()) != 1 || !strings.Contains(l.Meta.Title, "fork of "+id+" at step 1") {
		t.Errorf("fork: steps %d, interrupted %v, memory %v, title %q", l.Session.Steps, l.Session.Interrupted(), l.Session.Memory(), l.Meta.Title)
	}
	for _, ev := range l.Events {
		if ev.Session != fork {
			t.Fatalf("forked event keeps the old session id: %+v", ev)
		}
	}
	// The forked run continues from step 1: the script's turn 1 (clock) then
	// turn 2 (answer).
	j, l, err := store.OpenWriter(fork)
	if err != nil {
		t.Fatal(err)
	}
	res := newEngine(t, rememberTurns).Continue(context.Background(), l.Session, j)
	j.Close()
	if res.StopReason != engine.StopAnswered || res.Answer != "done" || l.Session.Steps != 3 {
		t.Errorf("continued fork: %+v, steps %d", res, l.Session.Steps)
	}
	if _, err := store.Fork(id, 99); err == nil {
		t.Errorf("fork past the end was accepted")
	}

	var md, js bytes.Buffer
	if err := store.Export(id, "md", &md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# remember my name", "## You\n\nremember my name", "`remember` → ok: `remembered name = Ada`", "`calculator` → ok: `6*7 = 42`", "## agentty\n\ndone"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), "cost cost") {
		t.Errorf("the export says cost twice:\n%s", md.String())
	}
	if err := store.Export(id, "json", &js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Meta    sessions.Meta
		History []engine.Message
		Memory  []engine.Fact
		Events  []json.RawMessage
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.Meta.ID != id || len(doc.History) != 7 || len(doc.Memory) != 1 || len(doc.Events) == 0 {
		t.Errorf("json export: %v %+v", err, doc.Meta)
	}
	if err := store.Export(id, "pdf", &js); err == nil {
		t.Errorf("unknown format accepted")
	}
}

func TestHome(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"AGENTTY_HOME": "/a", "XDG_DATA_HOME": "/x", "HOME": "/h"}, "/a"},
		{map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/h"}, "/x/agentty"},
		{map[string]string{"HOME": "/h"}, "/h/.local/share/agentty"},
	}
	for _, tt := range tests {
		if got, err := sessions.Home(func(k string) string { return tt.env[k] }); err != nil || got != tt.want {
			t.Errorf("Home(%v) = %q, %v; want %q", tt.env, got, err, tt.want)
		}
	}
}

func TestIDsSortByCreation(t *testing.T) {
	prev := ""
	for range 50 {
		id := sessions.NewID()
		if len(id) != 13 || id[:9] < prev {
			t.Fatalf("id %q after %q", id, prev)
		}
		prev = id[:9]
	}
}

func FuzzRead(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.jsonl")
	for _, p := range seeds {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte("{}\n{\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l := sessions.Read(b, "fuzz", "fuzz") // must not panic
		if l.Session == nil {
			t.Fatal("no session")
		}
	})
}

// TestWriteAhead checks that a subscriber behind the journal hears of each
// event only once it is in the file.
func TestWriteAhead(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	seen := 0
	sub := engine.SinkFunc(func(ev engine.Event) error {
		seen++
		if ev.Kind == engine.KindTextDelta {
			return nil
		}
		b, err := os.ReadFile(store.JournalPath(j.ID))
		if err != nil {
			return err
		}
		stamp, _ := json.Marshal(ev.Time)
		if !bytes.Contains(b, []byte(`"kind":"`+string(ev.Kind)+`","time":`+string(stamp))) {
			t.Errorf("%s reached a subscriber before the journal had it", ev.Kind)
		}
		return nil
	})
	res := newEngine(t, rememberTurns).Run(context.Background(), engine.NewSession(j.ID), "go", engine.Sinks{j, sub})
	if res.StopReason != engine.StopAnswered || seen < 15 {
		t.Errorf("run %+v, subscriber saw %d events", res, seen)
	}
}

// TestMalformedArgumentsAreJournaled: a model's arguments that are not JSON
// are journaled as text and read back byte for byte.
func TestMalformedArgumentsAreJournaled(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	id, live := journaledRun(t, store, `{"tool_calls":[{"name":"calculator","arguments":"{\"expression\": \"1+"}]},{"answer":"sorry"}`)
	l, err := store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(l.Session.History[1].ToolCalls[0].Args); got != `{"expression": "1+` || !reflect.DeepEqual(l.Session.History, live.History) {
		t.Errorf("arguments read back as %q", got)
	}
	if !strings.Contains(l.Session.History[2].Content, "not valid JSON") {
		t.Errorf("the model was told %q", l.Session.History[2].Content)
	}
}

// TestLongJournalReplays: a journal long enough to be decoded on every core
// replays to the same state as one read line by line.
func TestLongJournalReplays(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	var turns []string
	for i := range 200 {
		turns = append(turns, fmt.Sprintf(`{"tool_calls":[{"name":"remember","arguments":{"key":"k%d","value":"v%d"}}]}`, i, i))
	}
	turns = append(turns, `{"answer":"done"}`)
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := script.Parse("long", []byte(`{"turns":[`+strings.Join(turns, ",")+`]}`))
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, tools.Builtins()...), MaxSteps: 300})
	live := engine.NewSession(j.ID)
	if res := e.Run(context.Background(), live, "go", j); res.StopReason != engine.StopAnswered {
		t.Fatal(res.Err)
	}
	j.Close()
	l, err := store.Load(j.ID)
	if err != nil || len(l.Events) < 1000 {
		t.Fatalf("%v, %d events", err, len(l.Events))
	}
	if !reflect.DeepEqual(l.Session.History, live.History) || !reflect.DeepEqual(l.Session.Memory(), live.Memory()) || l.Session.Steps != live.Steps {
		t.Errorf("replayed state differs: %d vs %d messages, %d vs %d facts", len(l.Session.History), len(live.History), len(l.Session.Memory()), len(live.Memory()))
	}
	for i := 1; i < len(l.Events); i++ {
		if l.Events[i].Time.Before(l.Events[i-1].Time) {
			t.Fatalf("events out of order at %d", i)
		}
	}
}

// TestRenameIsNotLost: a rename cannot be undone by a journal that holds
// the session open (it would rewrite meta.json with the title it read), so
// renaming an open session fails clearly, and a rename made while the
// session is closed survives the next writer's runs and close.
func TestRenameIsNotLost(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	id, _ := journaledRun(t, store, rememberTurns)
	j, l, err := store.OpenWriter(id)
	if err != nil {
		t.Fatal(err)
	}
	err = store.Rename(id, "renamed while open")
	if !errors.Is(err, sessions.ErrLocked) || !strings.Contains(err.Error(), "rename "+id) {
		t.Errorf("rename while open: %v, want ErrLocked naming the session", err)
	}
	if m, _ := store.Meta(id); m.Title != "remember my name" {
		t.Errorf("a refused rename changed the title to %q", m.Title)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	if err := store.Rename(id, "Ada's session"); err != nil {
		t.Fatalf("rename: %v", err)
	}
	// The next writer runs and closes: the title stays.
	j, l, err = store.OpenWriter(id)
	if err != nil {
		t.Fatal(err)
	}
	if res := newEngine(t, `{"answer":"again"}`).Run(context.Background(), l.Session, "once more", j); res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %s %v", res.StopReason, res.Err)
	}
	if got := j.Meta().Title; got != "Ada's session" {
		t.Errorf("the journal's title = %q, want the new one", got)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if m, err := store.Meta(id); err != nil || m.Title != "Ada's session" || m.Runs != 2 {
		t.Errorf("after a run and close: meta = %+v, %v; want the new title and 2 runs", m, err)
	}
	if err := store.Rename("nope", "x"); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("renaming a missing session: %v, want ErrNotFound", err)
	}
}

func TestTitle(t *testing.T) {
	tests := []struct{ task, want string }{
		{"  remember\n my   name ", "remember my name"},
		{strings.Repeat("长", 60), strings.Repeat("长", 60)},
		{strings.Repeat("长", 61), strings.Repeat("长", 59) + "…"},
		{strings.Repeat("😀", 100), strings.Repeat("😀", 59) + "…"},
	}
	for _, tt := range tests {
		if got := sessions.Title(tt.task); got != tt.want {
			t.Errorf("Title(%q) = %q, want %q", tt.task, got, tt.want)
		}
	}
}

// TestExportLoadsNothing: a tool result, a memory value and an answer that
// hold an image, raw HTML or backticks (from a workspace file, a page, a
// steered model) are exported as text: a viewer opening the Markdown loads
// nothing.
func TestExportLoadsNothing(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	id, _ := journaledRun(t, store, `{"tool_calls":[{"name":"remember","arguments":{"key":"k","value":"![v](http://127.0.0.1:9/value.png)"}}]},
		{"tool_calls":[{"name":"calculator","arguments":{"expression":"![x](http://127.0.0.1:9/leak.png) `+"``"+`"}}]},
		{"answer":"see ![a](http://127.0.0.1:9/answer.png) and <img src=http://127.0.0.1:9/html.png>, code `+"`a<-b`"+`\n`+"```"+`\nx := <-ch\n`+"```"+`"}`)
	var md bytes.Buffer
	if err := store.Export(id, "md", &md); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	if strings.Contains(out, "<img") {
		t.Errorf("the export holds raw HTML:\n%s", out)
	}
	for _, want := range []string{
		"- memory: `k` = `![v](http://127.0.0.1:9/value.png)`",
		"→ error: ```error: calculator: unexpected character '!' at position 1 of \"![x](http://127.0.0.1:9/leak.png) ``\"```",
		"see !\\[a](http://127.0.0.1:9/answer.png) and &lt;img",
		"code `a<-b`", // code is shown as written
		"\nx := <-ch\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the export lacks %q:\n%s", want, out)
		}
	}
}

// TestToolStartedIsOnDiskFirst: when a tool's body starts, the journal's
// file already holds its tool_started, on every path a call takes: a
// step's only call, calls run in parallel, and an inline tool. (A kill
// during the call then leaves a journal that says the call began, and a
// continued run does not run it again unasked.)
func TestToolStartedIsOnDiskFirst(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var mu sync.Mutex
	checked := map[string]bool{}
	probe := func(name string, inline bool) engine.Tool {
		return engine.Tool{Name: name, Inline: inline, Func: func(_ context.Context, c *engine.Call) (string, error) {
			b, err := os.ReadFile(store.JournalPath(j.ID))
			if err != nil {
				return "", err
			}
			mu.Lock()
			defer mu.Unlock()
			checked[c.ID] = bytes.Contains(b, []byte(`"kind":"tool_started"`)) && bytes.Contains(b, []byte(`"id":"`+c.ID+`"`))
			return "ok", nil
		}}
	}
	m, err := script.Parse("probe", []byte(`{"turns":[
		{"tool_calls":[{"id":"single","name":"probe","arguments":{}}]},
		{"tool_calls":[{"id":"par1","name":"probe","arguments":{}},{"id":"par2","name":"probe","arguments":{}},{"id":"inl1","name":"probe_inline","arguments":{}}]},
		{"tool_calls":[{"id":"inl2","name":"probe_inline","arguments":{}}]},
		{"answer":"done"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, probe("probe", false), probe("probe_inline", true))})
	if res := e.Run(context.Background(), engine.NewSession(j.ID), "go", j); res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %+v", res)
	}
	for _, id := range []string{"single", "par1", "par2", "inl1", "inl2"} {
		if !checked[id] {
			t.Errorf("call %s ran before its tool_started was in the journal's file (checked: %v)", id, checked)
		}
	}
}

// TestCloseWritesAnUnchangedMetaOnce: a run's end writes the meta, and a
// Close right after does not write it again (one synced write fewer a run,
// in JetStream too); a title set after the run is written by Close.
func TestCloseWritesAnUnchangedMetaOnce(t *testing.T) {
	store, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inode := func(id string) uint64 {
		fi, err := os.Stat(filepath.Join(store.Dir(), id, "meta.json"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino // meta.json is replaced, never rewritten in place
	}
	for _, retitle := range []bool{false, true} {
		j, err := store.Create()
		if err != nil {
			t.Fatal(err)
		}
		if res := newEngine(t, `{"answer":"hi"}`).Run(context.Background(), engine.NewSession(j.ID), "go", j); res.StopReason != engine.StopAnswered {
			t.Fatalf("run: %s %v", res.StopReason, res.Err)
		}
		before := inode(j.ID)
		if retitle {
			j.SetTitle("renamed")
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		if rewritten := inode(j.ID) != before; rewritten != retitle {
			t.Errorf("retitled %v: Close wrote the meta: %v", retitle, rewritten)
		}
		l, err := store.Load(j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{false: "go", true: "renamed"}[retitle]; l.Meta.Title != want || l.Meta.Runs != 1 {
			t.Errorf("meta after Close: %+v, want the title %q and 1 run", l.Meta, want)
		}
	}
}
