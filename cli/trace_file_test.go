package cli

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentty/agentty/traces"
)

// readTraceFile reads an OTLP JSON lines file back with the OTLP protobuf
// JSON decoder, as a collector's otlpjsonfile receiver does: each line one
// export request. It returns the spans' names, and their trace ids.
func readTraceFile(t *testing.T, path string) (names []string, traceIDs map[string]bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	traceIDs = map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	lines := 0
	for sc.Scan() {
		lines++
		var req coltracepb.ExportTraceServiceRequest
		if err := protojson.Unmarshal(sc.Bytes(), &req); err != nil {
			t.Fatalf("line %d is not an OTLP JSON export request: %v", lines, err)
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
					traceIDs[string(s.TraceId)] = true
				}
			}
		}
	}
	if lines == 0 {
		t.Fatalf("%s is empty", path)
	}
	slices.Sort(names)
	return names, traceIDs
}

// TestTracesToAFile: run --trace-file writes the run's spans as OTLP JSON
// lines, and sessions trace ID --out writes the same spans again from the
// journal, with the run's trace id; both read back with the OTLP decoder
// (issue 54, 5).
func TestTracesToAFile(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	env := map[string]string{"AGENTTY_HOME": home}
	live := filepath.Join(dir, "live.jsonl")
	code, out, errs := runCLI(t, context.Background(), env, "run", "--model", "offline", "--trace-file", live, "what is 17*23?")
	if code != 0 || !strings.Contains(out, "391") {
		t.Fatalf("run: exit %d, %q %q", code, out, errs)
	}
	want := []string{"chat offline", "chat offline", "execute_tool calculator", "invoke_agent agentty"}
	if names, _ := readTraceFile(t, live); !slices.Equal(names, want) {
		t.Fatalf("spans in the file: %q", names)
	}
	m := regexp.MustCompile(`session: (\S+)`).FindStringSubmatch(errs)
	if m == nil {
		t.Fatalf("no session in %q", errs)
	}
	again := filepath.Join(dir, "again.jsonl")
	code, out, errs = runCLI(t, context.Background(), env, "sessions", "trace", m[1], "--out", again)
	if code != 0 || !strings.Contains(out, "run-1 trace") {
		t.Fatalf("sessions trace --out: exit %d, %q %q", code, out, errs)
	}
	names, ids := readTraceFile(t, again)
	if !slices.Equal(names, want) {
		t.Fatalf("spans written again: %q", names)
	}
	if id := traces.TraceID(m[1], "run-1"); !ids[string(id[:])] || len(ids) != 1 {
		t.Errorf("the spans are not all of the run's trace %s", id)
	}
	if fi, _ := os.Stat(again); fi.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode is %v, want 0600 (what was said may be in it)", fi.Mode().Perm())
	}

	// A FIFO in place of the file is refused at once (nothing waits for a
	// reader), and the next good request works.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, context.Background(), env, "sessions", "trace", m[1], "--out", fifo); code == 0 || !strings.Contains(errs, "not a regular file") {
		t.Errorf("--out a FIFO: exit %d, %q", code, errs)
	}
	if code, _, errs := runCLI(t, context.Background(), env, "sessions", "trace", m[1], "--out", again); code != 0 {
		t.Errorf("the next good request: exit %d, %q", code, errs)
	}
}
