package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/engine/openai"
)

const testKey = "sk-test-SECRET-1234567890"

func newModel(f *enginetest.Server, mod func(*openai.Config)) *openai.Model {
	cfg := openai.Config{Model: "test-model", BaseURL: f.URL(), APIKey: testKey, StallTimeout: 2 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	return openai.New(cfg)
}

func runEngine(t *testing.T, m engine.Model, task string) (engine.Result, *enginetest.Recorder, *engine.Session) {
	t.Helper()
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, enginetest.EchoTool()), System: "be brief", Retry: engine.Retry{Initial: time.Millisecond, Max: 20 * time.Millisecond, Attempts: 4}})
	rec := &enginetest.Recorder{}
	s := engine.NewSession("s")
	res := e.Run(context.Background(), s, task, rec)
	return res, rec, s
}

// TestToolCallRoundTrip runs a tool call whose arguments arrive in pieces,
// then an answer, and checks what the client sent the second time.
func TestToolCallRoundTrip(t *testing.T) {
	f := enginetest.NewServer(t,
		enginetest.Reply{Body: ": keep-alive\n\n" + enginetest.ToolCallStream("call_abc", "echo", `{"text":"hello world"}`, 6)},
		enginetest.Reply{Body: enginetest.Answer("It ", "said ", "**hello world**.")},
	)
	res, rec, s := runEngine(t, newModel(f, nil), "say hello")
	if res.StopReason != engine.StopAnswered || res.Answer != "It said **hello world**." {
		t.Fatalf("result %+v", res)
	}
	reqs := f.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, r := range reqs {
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			t.Errorf("Authorization header = %q", r.Header.Get("Authorization"))
		}
		if r.Body["stream"] != true || r.Body["model"] != "test-model" {
			t.Errorf("request body: stream %v model %v", r.Body["stream"], r.Body["model"])
		}
		if so, _ := r.Body["stream_options"].(map[string]any); so["include_usage"] != true {
			t.Errorf("stream_options = %v", r.Body["stream_options"])
		}
		tools, _ := r.Body["tools"].([]any)
		if len(tools) != 1 {
			t.Errorf("tools = %v", r.Body["tools"])
		}
	}
	msgs, _ := reqs[1].Body["messages"].([]any)
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
	for _, ev := range rec.Of(engine.KindTextDelta) {
		deltas = append(deltas, ev.Data.(*engine.TextDelta).Text)
	}
	if strings.Join(deltas, "|") != "It |said |**hello world**." {
		t.Errorf("text deltas = %q", deltas)
	}
	u := rec.Of(engine.KindUsage)
	if d := u[len(u)-1].Data.(*engine.UsageRecorded); d.PromptTokens != 42 || d.CompletionTokens != 7 || d.Estimated {
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
			rp := enginetest.Reply{Body: string(body)}
			if tt.json {
				rp.Headers = map[string]string{"Content-Type": "application/json"}
			}
			f := enginetest.NewServer(t, rp)
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
	ok := enginetest.Reply{Body: enginetest.Answer("fine")}
	tests := []struct {
		name       string
		first      enginetest.Reply
		stall      time.Duration
		wantStatus int
		minDelay   time.Duration
	}{
		{"429 with Retry-After seconds", enginetest.Reply{Status: 429, Headers: map[string]string{"Retry-After": "1"}, Body: mustRead(t, "openai_error_429.json")}, 0, 429, time.Second},
		{"429 with Retry-After date", enginetest.Reply{Status: 429, Headers: map[string]string{"Retry-After": "DATE"}, Body: mustRead(t, "openai_error_429.json")}, 0, 429, time.Second},
		{"500", enginetest.Reply{Status: 500, Body: mustRead(t, "openai_error_500.json")}, 0, 500, 0},
		{"503 without a JSON body", enginetest.Reply{Status: 503, Body: "upstream unavailable"}, 0, 503, 0},
		{"connection cut mid-stream", enginetest.Reply{Body: "data: " + enginetest.TextChunk("partial ") + "\n\ndata: " + enginetest.TextChunk("answ"), Cut: true}, 0, 0, 0},
		{"stream ends without finishing", enginetest.Reply{Body: "data: " + enginetest.TextChunk("partial") + "\n\n"}, 0, 0, 0},
		{"stall before the first byte", enginetest.Reply{Stall: 5 * time.Second, Body: enginetest.Answer("late")}, 300 * time.Millisecond, 0, 0},
		{"empty choices", enginetest.Reply{Body: enginetest.SSE(`{"choices":[]}`)}, 0, 0, 0},
		{"finish with nothing", enginetest.Reply{Body: enginetest.SSE(enginetest.FinishChunk("stop"))}, 0, 0, 0},
		{"finish_reason error", enginetest.Reply{Body: enginetest.SSE(enginetest.TextChunk("half"), enginetest.FinishChunk("error"))}, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.first.Headers["Retry-After"] == "DATE" {
				tt.first.Headers = map[string]string{"Retry-After": time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat)}
			}
			f := enginetest.NewServer(t, tt.first, ok)
			m := newModel(f, func(c *openai.Config) {
				if tt.stall > 0 {
					c.StallTimeout = tt.stall
				}
			})
			res, rec, s := runEngine(t, m, "go")
			if res.StopReason != engine.StopAnswered || res.Answer != "fine" {
				t.Fatalf("result %+v", res)
			}
			retries := rec.Of(engine.KindRetry)
			if len(retries) != 1 {
				t.Fatalf("%d retry events, want 1", len(retries))
			}
			r := retries[0].Data.(*engine.RetryScheduled)
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
		f := enginetest.NewServer(t, enginetest.Reply{Status: tt.status, Body: tt.body}, enginetest.Reply{Body: enginetest.Answer("never")})
		res, rec, _ := runEngine(t, newModel(f, nil), "go")
		if res.StopReason != engine.StopError || len(rec.Of(engine.KindRetry)) != 0 || len(f.Requests()) != 1 {
			t.Errorf("%d: stop %s, %d retries, %d requests", tt.status, res.StopReason, len(rec.Of(engine.KindRetry)), len(f.Requests()))
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
	bad := enginetest.SSE(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"echo","arguments":"{\"text\": \"unclosed"}}]}}]}`, enginetest.FinishChunk("tool_calls"))
	f := enginetest.NewServer(t, enginetest.Reply{Body: bad}, enginetest.Reply{Body: enginetest.Answer("sorry")})
	res, _, _ := runEngine(t, newModel(f, nil), "go")
	if res.StopReason != engine.StopAnswered {
		t.Fatal(res.Err)
	}
	msgs := f.Requests()[1].Body["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "tool" || last["tool_call_id"] != "call_1" || !strings.Contains(last["content"].(string), "not valid JSON") {
		t.Errorf("tool result sent back = %v", last)
	}
}

func TestCancelStopsTheStream(t *testing.T) {
	f := enginetest.NewServer(t, enginetest.Reply{Stall: 10 * time.Second, Body: enginetest.Answer("late")})
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
	f := enginetest.NewServer(t, enginetest.Reply{Body: enginetest.Answer("hi")})
	m := openai.New(openai.Config{Model: "llama3", BaseURL: f.URL()})
	if _, err := m.Decide(context.Background(), &engine.Request{Messages: []engine.Message{{Role: engine.RoleUser, Content: "hi"}}, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if h := f.Requests()[0].Header.Get("Authorization"); h != "" && h != "Bearer " {
		t.Errorf("Authorization sent to a local server without a key: %q", h)
	}
}

func TestMemoryAndTemperatureAreSent(t *testing.T) {
	f := enginetest.NewServer(t, enginetest.Reply{Body: enginetest.Answer("ok")})
	temp := 0.3
	m := newModel(f, func(c *openai.Config) { c.Temperature = &temp })
	req := &engine.Request{System: "be brief", Memory: []engine.Fact{{Key: "name", Value: "Ada"}}, Messages: []engine.Message{{Role: engine.RoleUser, Content: "hi"}}, Attempt: 1}
	if _, err := m.Decide(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body := f.Requests()[0].Body
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
		{"600 keep-alive lines before the first chunk", keepAlives + enginetest.Answer("awake"), "awake", "", "", ""},
		{"reasoning as \"reasoning\"", enginetest.SSE(`{"choices":[{"index":0,"delta":{"reasoning":"let me think"}}]}`, enginetest.TextChunk("42"), enginetest.FinishChunk("stop")), "42", "let me think", "", ""},
		{"a whole call in one chunk", enginetest.SSE(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"echo","arguments":"{\"text\":\"hi\"}"}}]}}]}`, enginetest.FinishChunk("tool_calls")), "", "", "echo", `{"text":"hi"}`},
		{"no index, no id on the second piece", enginetest.SSE(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c1","function":{"name":"echo","arguments":"{\"te"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"xt\":\"hi\"}"}}]}}]}`, enginetest.FinishChunk("tool_calls")), "", "", "echo", `{"text":"hi"}`},
		{"empty arguments", enginetest.SSE(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"echo","arguments":""}}]}}]}`, enginetest.FinishChunk("tool_calls")), "", "", "echo", ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := enginetest.NewServer(t, enginetest.Reply{Body: tt.body})
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
	refusal := enginetest.Reply{Status: 400, Body: `{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error"}}`}
	f := enginetest.NewServer(t, refusal, enginetest.Reply{Body: enginetest.Answer("first")}, enginetest.Reply{Body: enginetest.Answer("second")})
	m := newModel(f, nil)
	for _, want := range []string{"first", "second"} {
		d, err := m.Decide(context.Background(), &engine.Request{Messages: []engine.Message{{Role: engine.RoleUser, Content: "hi"}}, Attempt: 1})
		if err != nil || d.Text != want {
			t.Fatalf("decision %q, %v; want %q", d.Text, err, want)
		}
	}
	reqs := f.Requests()
	if len(reqs) != 3 || reqs[0].Body["stream_options"] == nil || reqs[1].Body["stream_options"] != nil || reqs[2].Body["stream_options"] != nil {
		t.Errorf("%d requests; stream_options sent: %v %v %v", len(reqs), reqs[0].Body["stream_options"] != nil, reqs[1].Body["stream_options"] != nil, len(reqs) > 2 && reqs[2].Body["stream_options"] != nil)
	}
}

// TestResponseModelIsJournaled: the model the server says answered (an
// alias resolved, a router's pick) is the decision's, journaled, one line.
func TestResponseModelIsJournaled(t *testing.T) {
	f := enginetest.NewServer(t, enginetest.Reply{Body: enginetest.SSE(
		`{"id":"c","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`,
		enginetest.FinishChunk("stop"))})
	res, rec, _ := runEngine(t, newModel(f, nil), "hello")
	if res.StopReason != engine.StopAnswered {
		t.Fatalf("%+v", res)
	}
	if d := rec.Of(engine.KindDecision); len(d) != 1 || d[0].Data.(*engine.Decided).Model != "gpt-4o-2024-08-06" {
		t.Errorf("the decision's model: %+v", d)
	}
}
