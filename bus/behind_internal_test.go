package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A read that meets a replica behind the stream's leader (here, one that
// lacks the journal's last messages on the first two tries) is not taken
// for the journal's end: it is tried again until it has every message
// the leader counts. Without the count check the first, short read would
// be the journal, and a worker would continue the session from it and do
// again what was done, every time, not one run in four.
func TestReadJournalBehindIsNotItsEnd(t *testing.T) {
	srv, err := StartServer(ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := Connect(Config{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	j, err := OpenJournals(context.Background(), nc)
	if err != nil {
		t.Fatal(err)
	}
	w, err := j.Lock("behind", true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const lines = 20
	var last uint64
	for i := range lines {
		if err := w.Append([]byte(fmt.Sprintf(`{"n":%d}`+"\n", i)), true); err != nil {
			t.Fatal(err)
		}
	}
	st, err := j.parts[0].stream.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	last = st.State.LastSeq
	short := 0
	j.lagging = func(seq uint64) bool {
		if seq > last-5 && short < 2 { // the replica lacks the last five, twice
			short++
			return true
		}
		return false
	}
	got, err := j.ReadJournal("behind")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(got), "\n"); n != lines || short != 2 {
		t.Fatalf("read %d lines of %d (%d short reads)", n, lines, short)
	}
	if !errors.Is(fmt.Errorf("x: %w", ErrBehind), ErrBehind) || !Unavailable(ErrBehind) {
		t.Error("a read behind is not one to try again")
	}
}
