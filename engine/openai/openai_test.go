package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/openai"
)

const testKey = "sk-test-SECRET-1234567890"

type recorder struct {
	mu     sync.Mutex
	events []engine.Event
}

func (r *recorder) Emit(ev engine.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return nil
}

func (r *recorder) of(k engine.Kind) []engine.Event {
	var out []engine.Event
	for _, e := range r.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func echoTool() engine.Tool {
	return engine.Tool{
		Name: "echo", Description: "echoes its text",
		Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct{ Text string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			return "echo: " + in.Text, nil
		},
	}
}

func newModel(f *fakeServer, mod func(*openai.Config)) *openai.Model {
	cfg := openai.Config{Model: "test-model", BaseURL: f.url(), APIKey: testKey, StallTimeout: 2 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	return openai.New(cfg)
}

func runEngine(t *testing.T, m engine.Model, task string) (engine.Result, *recorder, *engine.Session) {
	t.Helper()
	reg, err := engine.NewRegistry(echoTool())
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Config{Model: m, Tools: reg, System: "be brief", Retry: engine.Retry{Initial: time.Millisecond, Max: 20 * time.Millisecond, Attempts: 4}})
	rec := &recorder{}
	s := engine.NewSession("s")
	res := e.Run(context.Background(), s, task, rec)
	return res, rec, s
}

// TestToolCallRoundTrip runs a tool call whose arguments arrive in pieces,
// then an answer, and checks what the client sent the second time.
func TestToolCallRoundTrip(t *testing.T) {
	f := newFake(t,
		reply{body: ": keep-alive\n\n" + toolCallStream("call_abc", "echo", `{"text":"hello world"}`, 6)},
		reply{body: answer("It ", "said ", "**hello world**.")},
	)
	res, rec, s := runEngine(t, newModel(f, nil), "say hello")
	if res.StopReason != engine.StopAnswered || res.Answer != "It said **hello world**." {
		t.Fatalf("result %+v", res)
	}
	reqs := f.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, r := range reqs {
		if r.header.Get("Authorization") != "Bearer "+testKey {
			t.Errorf("Authorization header = %q", r.header.Get("Authorization"))
		}
		if r.body["stream"] != true || r.body["model"] != "test-model" {
			t.Errorf("request body: stream %v model %v", r.body["stream"], r.body["model"])
		}
		if so, _ := r.body["stream_options"].(map[string]any); so["include_usage"] != true {
			t.Errorf("stream_options = %v", r.body["stream_options"])
		}
		tools, _ := r.body["tools"].([]any)
		if len(tools) != 1 {
			t.Errorf("tools = %v", r.body["tools"])
		}
	}
	msgs, _ := reqs[1].body["messages"].([]any)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool" {
		t.Fatalf("second request roles = %v", roles)
	}
	asst := msgs[2].(map[string]any)
	calls := asst["tool_calls"].([]any)
	call := calls[0].(map[string]any)
	fn := call["function"].(map[string]any)
	toolMsg := msgs[3].(map[string]any)
	if call["id"] != "call_abc" || fn["name"] != "echo" || fn["arguments"] != `{"text":"hello world"}` || toolMsg["tool_call_id"] != "call_abc" || toolMsg["content"] != "echo: hello world" {
		t.Errorf("assistant call %v, tool message %v", call, toolMsg)
	}
	var deltas []string
	for _, ev := range rec.of(engine.KindTextDelta) {
		deltas = append(deltas, ev.Data.(*engine.TextDelta).Text)
	}
	if strings.Join(deltas, "|") != "It |said |**hello world**." {
		t.Errorf("text deltas = %q", deltas)
	}
	u := rec.of(engine.KindUsage)
	if d := u[len(u)-1].Data.(*engine.UsageData); d.PromptTokens != 42 || d.CompletionTokens != 7 || d.Estimated {
		t.Errorf("usage = %+v", d)
	}
	if s.Usage.PromptTokens != 84 {
		t.Errorf("session usage = %+v", s.Usage)
	}
}

// TestFixtures serves captures of real servers' traffic byte for byte.
func TestFixtures(t *testing.T) {
	tests := []struct {
		file      string
		wantCalls string // name(args) ids joined
		wantText  string
		wantReas  string
		wantUsage int
		wantErr   string
		retryable bool
		json      bool // served as application/json, not a stream
	}{
		{file: "openai_stream_single_tool.sse", wantCalls: "read_file"},
		{file: "openai_stream_single_tool_2024.sse", wantCalls: "get_weather"},
		{file: "openai_stream_parallel_tools.sse", wantCalls: "GetWeatherArgs,get_stock_price", wantUsage: 60},
		{file: "ollama_stream_single_tool.sse", wantCalls: "run_command"},
		{file: "ollama_stream_parallel_tools.sse", wantCalls: "run_command,run_command"},
		{file: "ollama_stream_parallel_index0.sse", wantCalls: "file_write,file_write"},
		{file: "ollama_stream_no_index.sse", wantCalls: "get_current_weather"},
		{file: "copilot_claude_stream_nonzero_index.sse", wantCalls: "bmcp_coder_coder_list_workspaces", wantText: "Now listing your Coder workspaces:", wantUsage: 58},
		{file: "openrouter_stream_empty_args.sse", wantCalls: "get_all_tabs", wantUsage: 55},
		{file: "vllm_stream_single_tool.sse", wantCalls: "run_command"},
		{file: "vllm_stream_reasoning_tool_usage.sse", wantCalls: "add_todo", wantReas: "Okay", wantUsage: 127},
		{file: "llamacpp_stream_single_tool.sse", wantCalls: "run_command"},
		{file: "llamacpp_stream_error_event.sse", wantErr: "exceeds the available context size"},
		{file: "openai_stream_midstream_error.sse", wantErr: "The server had an error", retryable: true},
		// Servers that ignore "stream": true and answer with one JSON body.
		{file: "openai_nonstream_single_tool.json", wantCalls: "read_file", json: true},
		{file: "openai_nonstream_parallel_tools.json", wantCalls: "GetWeatherArgs,get_stock_price", wantUsage: 60, json: true},
		{file: "ollama_nonstream_tool.json", wantCalls: "calculator", wantUsage: 19, json: true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "wire", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			rp := reply{body: string(body)}
			if tt.json {
				rp.headers = map[string]string{"Content-Type": "application/json"}
			}
			f := newFake(t, rp)
			var deltas strings.Builder
			m := newModel(f, nil)
			req := &engine.Request{Messages: []engine.Message{{Role: engine.RoleUser, Content: "go"}}, Attempt: 1}
			req = engine.WithDeltas(req, func(d engine.TextDelta) {
				if !d.Reasoning {
					deltas.WriteString(d.Text)
				}
			})
			d, err := m.Decide(context.Background(), req)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || engine.IsRetryable(err) != tt.retryable {
					t.Fatalf("err = %v (retryable %v), want %q (retryable %v)", err, engine.IsRetryable(err), tt.wantErr, tt.retryable)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			ids := map[string]bool{}
			for _, c := range d.ToolCalls {
				names = append(names, c.Name)
				if len(c.Args) > 0 && !json.Valid(c.Args) {
					t.Errorf("call %s: arguments are not JSON: %s", c.Name, c.Args)
				}
				if c.ID != "" {
					if ids[c.ID] {
						t.Errorf("two calls share id %s", c.ID)
					}
					ids[c.ID] = true
				}
			}
			if strings.Join(names, ",") != tt.wantCalls {
				t.Errorf("calls = %v, want %s", names, tt.wantCalls)
			}
			if strings.TrimSpace(d.Text) != tt.wantText || deltas.String() != d.Text {
				t.Errorf("text = %q (deltas %q), want %q", d.Text, deltas.String(), tt.wantText)
			}
			if !strings.Contains(d.Reasoning, tt.wantReas) {
				t.Errorf("reasoning = %q", d.Reasoning)
			}
			if tt.wantUsage > 0 && d.Usage.CompletionTokens != tt.wantUsage {
				t.Errorf("usage = %+v, want %d completion tokens", d.Usage, tt.wantUsage)
			}
		})
	}
}

// TestFaults injects the faults of flaky providers and checks each is
// retried (or not) as it should be.
func TestFaults(t *testing.T) {
	ok := reply{body: answer("fine")}
	tests := []struct {
		name       string
		first      reply
		stall      time.Duration
		wantStatus int
		minDelay   time.Duration
	}{
		{"429 with Retry-After seconds", reply{status: 429, headers: map[string]string{"Retry-After": "1"}, body: mustRead(t, "openai_error_429.json")}, 0, 429, time.Second},
		{"429 with Retry-After date", reply{status: 429, headers: map[string]string{"Retry-After": "DATE"}, body: mustRead(t, "openai_error_429.json")}, 0, 429, time.Second},
		{"500", reply{status: 500, body: mustRead(t, "openai_error_500.json")}, 0, 500, 0},
		{"503 without a JSON body", reply{status: 503, body: "upstream unavailable"}, 0, 503, 0},
		{"connection cut mid-stream", reply{body: "data: " + textChunk("partial ") + "\n\ndata: " + textChunk("answ"), cut: true}, 0, 0, 0},
		{"stream ends without finishing", reply{body: "data: " + textChunk("partial") + "\n\n"}, 0, 0, 0},
		{"stall before the first byte", reply{stall: 5 * time.Second, body: answer("late")}, 300 * time.Millisecond, 0, 0},
		{"empty choices", reply{body: sse(`{"choices":[]}`)}, 0, 0, 0},
		{"finish with nothing", reply{body: sse(finishChunk("stop"))}, 0, 0, 0},
		{"finish_reason error", reply{body: sse(textChunk("half"), finishChunk("error"))}, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.first.headers["Retry-After"] == "DATE" {
				tt.first.headers = map[string]string{"Retry-After": time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat)}
			}
			f := newFake(t, tt.first, ok)
			m := newModel(f, func(c *openai.Config) {
				if tt.stall > 0 {
					c.StallTimeout = tt.stall
				}
			})
			res, rec, s := runEngine(t, m, "go")
			if res.StopReason != engine.StopAnswered || res.Answer != "fine" {
				t.Fatalf("result %+v", res)
			}
			retries := rec.of(engine.KindRetry)
			if len(retries) != 1 {
				t.Fatalf("%d retry events, want 1", len(retries))
			}
			r := retries[0].Data.(*engine.RetryData)
			if r.Status != tt.wantStatus || time.Duration(r.DelayMS)*time.Millisecond < tt.minDelay-50*time.Millisecond || r.Cause == "" {
				t.Errorf("retry = %+v, want status %d, delay ≥ %s", r, tt.wantStatus, tt.minDelay)
			}
			if strings.Contains(r.Cause, testKey) {
				t.Errorf("the key is in the retry cause")
			}
			// The failed attempt's partial text never reaches history.
			for _, msg := range s.History {
				if strings.Contains(msg.Content, "partial") || strings.Contains(msg.Content, "half") {
					t.Errorf("history holds a failed attempt's text: %+v", msg)
				}
			}
		})
	}
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "wire", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   string
	}{
		{400, mustRead(t, "openai_error_400_context_length.json"), "the server rejected the request (HTTP 400): Input tokens exceed the configured limit"},
		{400, mustRead(t, "vllm_error_400.json"), "HTTP 400"},
		{401, `{"error":{"message":"Incorrect API key provided: ` + testKey + `","type":"invalid_request_error","code":"invalid_api_key"}}`, "authentication failed: check OPENAI_API_KEY (HTTP 401): Incorrect API key provided: [redacted]"},
		{403, `{"error":{"message":"not allowed"}}`, "permission denied (HTTP 403): not allowed"},
		{404, mustRead(t, "ollama_error_404.json"), `not found: check the model name and --base-url (HTTP 404): model "gemma3:12b" not found`},
		// A long message is cut to 300 characters, between two of them.
		{400, `{"error":{"message":"x` + strings.Repeat("上下文太长", 80) + `"}}`, "(HTTP 400): x" + strings.Repeat("上下文太长", 59) + "上下文…"},
	}
	for _, tt := range tests {
		f := newFake(t, reply{status: tt.status, body: tt.body}, reply{body: answer("never")})
		res, rec, _ := runEngine(t, newModel(f, nil), "go")
		if res.StopReason != engine.StopError || len(rec.of(engine.KindRetry)) != 0 || len(f.requests()) != 1 {
			t.Errorf("%d: stop %s, %d retries, %d requests", tt.status, res.StopReason, len(rec.of(engine.KindRetry)), len(f.requests()))
		}
		msg := res.Err.Error()
		if !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") || strings.Contains(msg, testKey) || !utf8.ValidString(msg) {
			t.Errorf("%d: error %q, want one line containing %q, without the key", tt.status, msg, tt.want)
		}
	}
}

// TestMalformedArguments: the model sends arguments that are not JSON; it
// is told so as the tool result, and decides again.
func TestMalformedArguments(t *testing.T) {
	bad := sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"echo","arguments":"{\"text\": \"unclosed"}}]}}]}`, finishChunk("tool_calls"))
	f := newFake(t, reply{body: bad}, reply{body: answer("sorry")})
	res, _, _ := runEngine(t, newModel(f, nil), "go")
	if res.StopReason != engine.StopAnswered {
		t.Fatal(res.Err)
	}
	msgs := f.requests()[1].body["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "tool" || last["tool_call_id"] != "call_1" || !strings.Contains(last["content"].(string), "not valid JSON") {
		t.Errorf("tool result sent back = %v", last)
	}
}

func TestCancelStopsTheStream(t *testing.T) {
	f := newFake(t, reply{stall: 10 * time.Second, body: answer("late")})
	m := newModel(f, func(c *openai.Config) { c.StallTimeout = time.Minute })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := m.Decide(ctx, &engine.Request{Messages: []engine.Message{{Role: engine.RoleUser, Content: "go"}}, Attempt: 1})
	if !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Errorf("err %v after %s", err, time.Since(start))
	}
}

func TestNoKeyForLocalServers(t *testing.T) {
	f := newFake(t, reply{body: answer("hi")})
	m := openai.New(openai.Config{Model: "llama3", BaseURL: f.url()})
	if _, err := m.Decide(context.Background(), &engine.Request{Messages: []engine.Message{{Role: engine.RoleUser, Content: "hi"}}, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if h := f.requests()[0].header.Get("Authorization"); h != "" && h != "Bearer " {
		t.Errorf("Authorization sent to a local server without a key: %q", h)
	}
}

func TestMemoryAndTemperatureAreSent(t *testing.T) {
	f := newFake(t, reply{body: answer("ok")})
	temp := 0.3
	m := newModel(f, func(c *openai.Config) { c.Temperature = &temp })
	req := &engine.Request{System: "be brief", Memory: []engine.Fact{{Key: "name", Value: "Ada"}}, Messages: []engine.Message{{Role: engine.RoleUser, Content: "hi"}}, Attempt: 1}
	if _, err := m.Decide(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body := f.requests()[0].body
	sys := body["messages"].([]any)[0].(map[string]any)
	if !strings.Contains(sys["content"].(string), "- name: Ada") || body["temperature"].(float64) < 0.29 {
		t.Errorf("system %v, temperature %v", sys, body["temperature"])
	}
}

// TestServerQuirks covers what real servers send that go-openai alone
// mishandles.
func TestServerQuirks(t *testing.T) {
	keepAlives := strings.Repeat(": keep-alive\n\n", 600)
	tests := []struct {
		name, body          string
		wantText, wantReas  string
		wantCalls, wantArgs string
	}{
		{"600 keep-alive lines before the first chunk", keepAlives + answer("awake"), "awake", "", "", ""},
		{"reasoning as \"reasoning\"", sse(`{"choices":[{"index":0,"delta":{"reasoning":"let me think"}}]}`, textChunk("42"), finishChunk("stop")), "42", "let me think", "", ""},
		{"a whole call in one chunk", sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"echo","arguments":"{\"text\":\"hi\"}"}}]}}]}`, finishChunk("tool_calls")), "", "", "echo", `{"text":"hi"}`},
		{"no index, no id on the second piece", sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c1","function":{"name":"echo","arguments":"{\"te"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"xt\":\"hi\"}"}}]}}]}`, finishChunk("tool_calls")), "", "", "echo", `{"text":"hi"}`},
		{"empty arguments", sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"echo","arguments":""}}]}}]}`, finishChunk("tool_calls")), "", "", "echo", ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, reply{body: tt.body})
			d, err := newModel(f, nil).Decide(context.Background(), &engine.Request{Messages: []engine.Message{{Role: engine.RoleUser, Content: "go"}}, Attempt: 1})
			if err != nil {
				t.Fatal(err)
			}
			var calls, args string
			if len(d.ToolCalls) == 1 {
				calls, args = d.ToolCalls[0].Name, string(d.ToolCalls[0].Args)
			}
			if d.Text != tt.wantText || d.Reasoning != tt.wantReas || calls != tt.wantCalls || args != tt.wantArgs {
				t.Errorf("decision text %q reasoning %q call %s(%s)", d.Text, d.Reasoning, calls, args)
			}
		})
	}
}

// TestServerRefusingStreamOptions: an older server that rejects
// stream_options gets the request again without it, and later ones too.
func TestServerRefusingStreamOptions(t *testing.T) {
	refusal := reply{status: 400, body: `{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error"}}`}
	f := newFake(t, refusal, reply{body: answer("first")}, reply{body: answer("second")})
	m := newModel(f, nil)
	for _, want := range []string{"first", "second"} {
		d, err := m.Decide(context.Background(), &engine.Request{Messages: []engine.Message{{Role: engine.RoleUser, Content: "hi"}}, Attempt: 1})
		if err != nil || d.Text != want {
			t.Fatalf("decision %q, %v; want %q", d.Text, err, want)
		}
	}
	reqs := f.requests()
	if len(reqs) != 3 || reqs[0].body["stream_options"] == nil || reqs[1].body["stream_options"] != nil || reqs[2].body["stream_options"] != nil {
		t.Errorf("%d requests; stream_options sent: %v %v %v", len(reqs), reqs[0].body["stream_options"] != nil, reqs[1].body["stream_options"] != nil, len(reqs) > 2 && reqs[2].body["stream_options"] != nil)
	}
}
