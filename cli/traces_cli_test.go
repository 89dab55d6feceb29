package cli

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine/enginetest"
	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an in-process OTLP/HTTP collector: it decodes what the real
// exporter sends.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*collectortrace.ExportTraceServiceRequest
	metrics  []string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/v1/metrics" {
			b, _ := io.ReadAll(req.Body)
			var m collectormetrics.ExportMetricsServiceRequest
			if err := proto.Unmarshal(b, &m); err != nil {
				t.Errorf("not an ExportMetricsServiceRequest: %v", err)
				return
			}
			r.mu.Lock()
			for _, rm := range m.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					for _, x := range sm.Metrics {
						r.metrics = append(r.metrics, x.Name)
					}
				}
			}
			r.mu.Unlock()
			out, _ := proto.Marshal(&collectormetrics.ExportMetricsServiceResponse{})
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.Write(out)
			return
		}
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("OTLP request to %s as %q", req.URL.Path, req.Header.Get("Content-Type"))
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			gz, err := gzip.NewReader(req.Body)
			if err != nil {
				t.Error(err)
				return
			}
			body = gz
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Error(err)
			return
		}
		var m collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &m); err != nil {
			t.Errorf("not an ExportTraceServiceRequest: %v", err)
			return
		}
		r.mu.Lock()
		r.requests = append(r.requests, &m)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

type wireSpan struct {
	span     *tracepb.Span
	resource map[string]string
}

func (r *receiver) spans() []wireSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []wireSpan
	for _, req := range r.requests {
		for _, rs := range req.ResourceSpans {
			res := map[string]string{}
			for _, kv := range rs.GetResource().GetAttributes() {
				res[kv.Key] = kv.Value.GetStringValue()
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					out = append(out, wireSpan{s, res})
				}
			}
		}
	}
	return out
}

func wireAttrs(kvs []*commonpb.KeyValue) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestRunSendsTracesOverOTLP(t *testing.T) {
	rcv := newReceiver(t)
	home := t.TempDir()
	env := map[string]string{"AGENTTY_HOME": home, "OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL}
	code, out, errs := runCLI(t, context.Background(), env, "run", "--model", "offline", "what is 17*23?")
	if code != 0 || !strings.Contains(out, "391") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if strings.Contains(errs, "traces") {
		t.Errorf("stderr speaks of traces: %q", errs)
	}
	spans := rcv.spans()
	var names []string
	byName := map[string]*tracepb.Span{}
	for _, s := range spans {
		names = append(names, s.span.Name)
		byName[s.span.Name] = s.span
		if s.resource["service.name"] != "agentty" {
			t.Errorf("service.name = %q", s.resource["service.name"])
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"chat offline", "chat offline", "execute_tool calculator", "invoke_agent agentty"}) {
		t.Fatalf("spans on the wire: %q", names)
	}
	root, chat, tool := byName["invoke_agent agentty"], byName["chat offline"], byName["execute_tool calculator"]
	m := regexp.MustCompile(`session: (\S+)`).FindStringSubmatch(errs)
	if m == nil {
		t.Fatalf("no session in %q", errs)
	}
	ra := wireAttrs(root.Attributes)
	if ra["gen_ai.operation.name"].GetStringValue() != "invoke_agent" || ra["gen_ai.conversation.id"].GetStringValue() != m[1] ||
		ra["agentty.run.stop_reason"].GetStringValue() != "answered" || ra["agentty.run.steps"].GetIntValue() != 2 {
		t.Errorf("run attributes: %v", root.Attributes)
	}
	ca := wireAttrs(chat.Attributes)
	if chat.Kind != tracepb.Span_SPAN_KIND_CLIENT || ca["gen_ai.operation.name"].GetStringValue() != "chat" ||
		ca["gen_ai.request.model"].GetStringValue() != "offline" || ca["gen_ai.usage.input_tokens"] == nil {
		t.Errorf("chat: %v %v", chat.Kind, chat.Attributes)
	}
	ta := wireAttrs(tool.Attributes)
	if ta["gen_ai.tool.name"].GetStringValue() != "calculator" || ta["gen_ai.tool.type"].GetStringValue() != "function" || ta["gen_ai.tool.call.id"].GetStringValue() == "" {
		t.Errorf("tool: %v", tool.Attributes)
	}
	for _, s := range []*tracepb.Span{chat, tool} {
		if string(s.TraceId) != string(root.TraceId) || string(s.ParentSpanId) != string(root.SpanId) {
			t.Errorf("%s is not under the run", s.Name)
		}
	}
	for _, s := range spans {
		for _, kv := range s.span.Attributes {
			if strings.Contains(kv.Key, "messages") || strings.Contains(kv.Key, "arguments") || strings.Contains(kv.Key, "result") {
				t.Errorf("content without --trace-content: %s on %s", kv.Key, s.span.Name)
			}
		}
	}

	// The same session sent again from its journal: the same spans, ids
	// and times.
	again := newReceiver(t)
	code, out, errs = runCLI(t, context.Background(), map[string]string{"AGENTTY_HOME": home}, "sessions", "trace", m[1], "--otlp", again.URL)
	if code != 0 || !strings.Contains(out, "run-1 trace") {
		t.Fatalf("sessions trace: exit %d, %q %q", code, out, errs)
	}
	replayed := again.spans()
	if len(replayed) != len(spans) {
		t.Fatalf("%d spans replayed, %d live", len(replayed), len(spans))
	}
	key := func(s *tracepb.Span) string {
		return string(s.TraceId) + string(s.SpanId) + string(s.ParentSpanId) + s.Name
	}
	live := map[string]*tracepb.Span{}
	for _, s := range spans {
		live[key(s.span)] = s.span
	}
	for _, s := range replayed {
		l, ok := live[key(s.span)]
		if !ok {
			t.Errorf("replayed span %s has other ids than the live one", s.span.Name)
			continue
		}
		if l.StartTimeUnixNano != s.span.StartTimeUnixNano || l.EndTimeUnixNano != s.span.EndTimeUnixNano {
			t.Errorf("%s: times differ", l.Name)
		}
	}
}

func TestTraceContentOnTheWire(t *testing.T) {
	rcv := newReceiver(t)
	env := map[string]string{"AGENTTY_HOME": t.TempDir(), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": rcv.URL + "/v1/traces", "AGENTTY_TRACE_CONTENT": "1"}
	if code, _, errs := runCLI(t, context.Background(), env, "run", "--model", "offline", "what is 17*23?"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	found := false
	for _, s := range rcv.spans() {
		if s.span.Name == "execute_tool calculator" {
			a := wireAttrs(s.span.Attributes)
			found = strings.Contains(a["gen_ai.tool.call.result"].GetStringValue(), "391")
		}
	}
	if !found {
		t.Errorf("no tool result with AGENTTY_TRACE_CONTENT=1")
	}
}

// TestCollectorDown: a collector that cannot be reached changes neither the
// answer nor the exit code; it is said once.
func TestCollectorDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	code, out, errs := runCLI(t, context.Background(), nil, "run", "--model", "offline", "--otlp", url, "what is 17*23?")
	if code != 0 || !strings.Contains(out, "391") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if n := strings.Count(errs, "spans could not be sent"); n != 1 {
		t.Errorf("told %d times of the collector: %q", n, errs)
	}
}

func TestTraceFlags(t *testing.T) {
	if code, _, errs := runCLI(t, context.Background(), nil, "run", "--model", "offline", "--otlp", "localhost", "hi"); code != app.ExitUsage || !strings.Contains(errs, "OTLP endpoint") {
		t.Errorf("--otlp without a scheme: exit %d, %q", code, errs)
	}
	if code, _, errs := runCLI(t, context.Background(), nil, "sessions", "trace", "nope"); code != app.ExitUsage || !strings.Contains(errs, "--otlp") {
		t.Errorf("sessions trace with no collector: exit %d, %q", code, errs)
	}
}

// TestCollectorHangs: a collector that takes the connection and never
// answers holds the end of the command for the shutdown's bound only
// (traces.ShutdownTimeout); the run's answer and exit code are unchanged.
func TestCollectorHangs(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first
	code, out, errs := runCLI(t, context.Background(), nil, "run", "--model", "offline", "--otlp", srv.URL, "what is 17*23?")
	if code != 0 || !strings.Contains(out, "391") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if n := strings.Count(errs, "spans could not be sent"); n != 1 {
		t.Errorf("told %d times of the collector: %q", n, errs)
	}
}

func TestMetricsOverOTLP(t *testing.T) {
	rcv := newReceiver(t)
	env := map[string]string{"AGENTTY_HOME": t.TempDir(), "OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_METRICS_EXPORTER": "otlp"}
	if code, _, errs := runCLI(t, context.Background(), env, "run", "--model", "offline", "what is 17*23?"); code != 0 || strings.Contains(errs, "traces") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rcv.mu.Lock()
	got := slices.Clone(rcv.metrics)
	rcv.mu.Unlock()
	slices.Sort(got)
	if want := []string{"agentty.tool.calls", "agentty.usage.cost", "gen_ai.client.operation.duration", "gen_ai.client.token.usage"}; !slices.Equal(got, want) {
		t.Errorf("metrics on the wire: %q, want %q", got, want)
	}
	if len(rcv.spans()) != 4 {
		t.Errorf("%d spans beside the metrics", len(rcv.spans()))
	}
}

// With tracing on, each model request carries a W3C traceparent whose
// trace is the run's and whose parent is that step's chat span, as sent.
func TestModelRequestsCarryTraceparent(t *testing.T) {
	rcv := newReceiver(t)
	srv := enginetest.NewServer(t, enginetest.Reply{Body: enginetest.Answer("hi")})
	env := map[string]string{"AGENTTY_HOME": t.TempDir(), "OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OPENAI_BASE_URL": srv.URL()}
	if code, _, errs := runCLI(t, context.Background(), env, "run", "--model", "m", "hello"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	tp := reqs[0].Header.Get("Traceparent")
	var chat *tracepb.Span
	for _, s := range rcv.spans() {
		if s.span.Name == "chat m" {
			chat = s.span
		}
	}
	if chat == nil {
		t.Fatal("no chat span on the wire")
	}
	want := fmt.Sprintf("00-%x-%x-01", chat.TraceId, chat.SpanId)
	if tp != want {
		t.Errorf("traceparent %q, want %q (the chat span's trace and id)", tp, want)
	}
	// Tracing off: no header.
	srv.Reset(enginetest.Reply{Body: enginetest.Answer("hi")})
	delete(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
	runCLI(t, context.Background(), env, "run", "--model", "m", "hello")
	if reqs := srv.Requests(); len(reqs) == 0 || reqs[len(reqs)-1].Header.Get("Traceparent") != "" {
		t.Errorf("a traceparent without tracing")
	}
}

// TestWorkflowTraces: a workflow run sends its trace as any run does, and
// `sessions trace` of its session sends the same spans once each: one root
// invoke_workflow named by the workflow, every span id once, no span of negative length.
func TestWorkflowTraces(t *testing.T) {
	rcv := newReceiver(t)
	env := agentEnv(t)
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = rcv.URL
	code, _, errs := runCLI(t, context.Background(), env, "workflow", "run", "../examples/workflows/arithmetic.yaml", "--model", "offline")
	if code != 0 {
		t.Fatalf("workflow run: exit %d: %s", code, errs)
	}
	live := rcv.spans()
	checkWorkflowSpans(t, "live", live)
	id := strings.TrimSpace(strings.TrimPrefix(strings.Split(errs, "\n")[0], "session:"))
	rcv2 := newReceiver(t)
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = rcv2.URL
	code, out, errs := runCLI(t, context.Background(), env, "sessions", "trace", id)
	if code != 0 {
		t.Fatalf("sessions trace: exit %d: %s %s", code, out, errs)
	}
	if n := strings.Count(out+errs, "run-1 trace"); n != 1 {
		t.Errorf("the run's trace is named %d times:\n%s%s", n, out, errs)
	}
	later := rcv2.spans()
	checkWorkflowSpans(t, "sessions trace", later)
	if len(later) != len(live) {
		t.Errorf("the journal's trace has %d spans, the live one %d", len(later), len(live))
	}
}

func checkWorkflowSpans(t *testing.T, what string, spans []wireSpan) {
	t.Helper()
	if len(spans) == 0 {
		t.Fatalf("%s: no spans", what)
	}
	roots, ids := 0, map[string]int{}
	for _, s := range spans {
		ids[fmt.Sprintf("%x", s.span.SpanId)]++
		if len(s.span.ParentSpanId) == 0 {
			roots++
			if s.span.Name != "invoke_workflow arithmetic" { // named by the workflow (GenAI conventions)
				t.Errorf("%s: a root span %q, want invoke_workflow arithmetic", what, s.span.Name)
			}
		}
		if s.span.EndTimeUnixNano < s.span.StartTimeUnixNano {
			t.Errorf("%s: span %q ends before it starts", what, s.span.Name)
		}
	}
	if roots != 1 {
		t.Errorf("%s: %d root spans, want 1", what, roots)
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("%s: span %s sent %d times", what, id, n)
		}
	}
}

// TestReplayedDenialTrace: a recorded call that the replay denies (no
// --yes) is traced with a length of zero or more, and the replay's trace
// has the live run's spans, one for one.
func TestReplayedDenialTrace(t *testing.T) {
	ws := t.TempDir()
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"a.txt","content":"hi"}},{"name":"calculator","arguments":{"expression":"1+1"}}]},{"answer":"done"}]}`)
	live := newReceiver(t)
	env := agentEnv(t)
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = live.URL
	code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "--yes", "write it")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	code, out, _ := runCLI(t, context.Background(), env, "sessions", "ls", "--workspace", ws, "--json")
	id := regexp.MustCompile(`"id":\s*"([^"]+)"`).FindStringSubmatch(out)
	if code != 0 || id == nil {
		t.Fatalf("sessions ls: %s", out)
	}
	replayed := newReceiver(t)
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = replayed.URL
	runCLI(t, context.Background(), env, "replay", "--workspace", ws, id[1])
	names := func(spans []wireSpan) []string {
		var out []string
		for _, s := range spans {
			name, _, _ := strings.Cut(s.span.Name, " ") // chat's model differs: "replay of …"
			if !strings.HasPrefix(name, "chat") {
				name = s.span.Name
			}
			out = append(out, name)
			if s.span.EndTimeUnixNano < s.span.StartTimeUnixNano {
				t.Errorf("span %q ends %dns before it starts", s.span.Name, s.span.StartTimeUnixNano-s.span.EndTimeUnixNano)
			}
		}
		slices.Sort(out)
		return out
	}
	if a, b := names(live.spans()), names(replayed.spans()); !slices.Equal(a, b) {
		t.Errorf("live spans %v, replayed %v", a, b)
	}
}
