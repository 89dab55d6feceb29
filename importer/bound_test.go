package importer

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentty/agentty/sessions"
)

// writeBig writes a Claude Code transcript of runs runs, each a question,
// a Bash call and its result of size bytes, and an answer; it returns its
// size.
func writeBig(t *testing.T, path string, runs, size int) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	chunk := strings.Repeat("0123456789abcdef", 4096)
	parent := "null"
	for i := range runs {
		u, a, r, a2 := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i), fmt.Sprintf("r%d", i), fmt.Sprintf("b%d", i)
		fmt.Fprintf(w, `{"type":"user","uuid":%q,"parentUuid":%s,"sessionId":"big","message":{"role":"user","content":"question %d"}}`+"\n", u, parent, i)
		fmt.Fprintf(w, `{"type":"assistant","uuid":%q,"parentUuid":%q,"message":{"id":"m%d","role":"assistant","content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"cat big"}}]}}`+"\n", a, u, i, i)
		fmt.Fprintf(w, `{"type":"user","uuid":%q,"parentUuid":%q,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"`, r, a, i)
		for n := 0; n < size; n += len(chunk) {
			w.WriteString(chunk[:min(len(chunk), size-n)])
		}
		w.WriteString(`"}]}}` + "\n")
		fmt.Fprintf(w, `{"type":"assistant","uuid":%q,"parentUuid":%q,"message":{"id":"n%d","role":"assistant","content":[{"type":"text","text":"read it"}]}}`+"\n", a2, r, i)
		parent = fmt.Sprintf("%q", a2)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	f.Close()
	return fi.Size()
}

// peakHeap imports the transcript at path and returns the most heap its
// objects held while it did (sampled every millisecond, after a GC).
func peakHeap(t *testing.T, path string) uint64 {
	t.Helper()
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := ReadClaude(f, path)
	if err == nil {
		store := newStore(t)
		_, err = Import(context.Background(), store, tr)
	}
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return peak
}

// TestImportMemoryIsBounded: a transcript of over 300 MB (tool results of
// 8 MiB, as a session that read big files writes) imports holding about a
// few of its largest lines at once, not the file: the peak heap stays under
// a bound of the line's size, and is no more than a small file's of the
// same lines.
func TestImportMemoryIsBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("320 MB of JSON takes minutes under the race detector: .ci/run runs this test without it")
	}
	const line = 8 << 20
	dir := t.TempDir()
	small, big := filepath.Join(dir, "small.jsonl"), filepath.Join(dir, "big.jsonl")
	writeBig(t, small, 3, line)
	if n := writeBig(t, big, 38, line); n < 300<<20 {
		t.Fatalf("the big transcript is %d MB", n>>20)
	}
	ps, pb := peakHeap(t, small), peakHeap(t, big)
	t.Logf("peak heap: %d MB importing 25 MB, %d MB importing 320 MB", ps>>20, pb>>20)
	if bound := uint64(8*line + 64<<20); pb > bound {
		t.Errorf("importing 320 MB took a peak heap of %d MB, over %d MB (8 lines and 64 MB)", pb>>20, bound>>20)
	}
	if pb > 2*ps { // a thirteenth of the file, within twice its peak (the sampling misses some of a short import's)
		t.Errorf("the peak heap grew with the file: %d MB for 25 MB, %d MB for 320 MB", ps>>20, pb>>20)
	}
	os.Remove(big) // 300 MB of a temporary folder given back at once
}

func newStore(t *testing.T) *sessions.Store {
	t.Helper()
	store, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return store
}
