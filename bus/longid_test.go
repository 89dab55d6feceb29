package bus_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/nats-io/nats.go"
)

// A sub-run's id holds the model's tool call id, of any length: a subject
// over the server's max_control_line (4 KiB) makes the server drop the
// connection, and the events after it are lost or delayed.
func TestALongRunIDIsPublished(t *testing.T) {
	s := startServer(t)
	sub, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ch := make(chan *nats.Msg, 16)
	if _, err := sub.ChanSubscribe(bus.Filter("sess"), ch); err != nil {
		t.Fatal(err)
	}
	sub.Flush()
	disc := make(chan error, 4)
	nc, err := bus.Connect(bus.Config{URL: s.URL()}, nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { disc <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close() // the sink's opener closes it, never the sink
	sink := bus.NewSink(nc)
	now := time.Now()
	long := "run-1/1/" + strings.Repeat("c", 5000)
	sink.Emit(engine.Event{V: 1, Session: "sess", Run: long, Kind: engine.KindToolStarted, Time: now, Data: &engine.ToolStarted{Name: "x"}})
	sink.Emit(engine.Event{V: 1, Session: "sess", Run: "run-1", Kind: engine.KindRunFinished, Time: now, Data: &engine.RunFinished{StopReason: engine.StopAnswered}})
	if err := sink.Close(3 * time.Second); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case e := <-disc:
		t.Errorf("the connection was dropped by the server: %v", e)
	default:
	}
	if !nc.IsConnected() {
		t.Error("closing the sink closed the connection it did not open")
	}
	got := 0
	for {
		select {
		case m := <-ch:
			got++
			t.Logf("got %d bytes subject", len(m.Subject))
			continue
		case <-time.After(2 * time.Second):
		}
		break
	}
	if got != 2 {
		t.Errorf("%d of 2 events arrived (err %v)", got, err)
	}
}

// After an over-long run id, the events published later all arrive: the
// connection is not dropped (an over-long subject used to end it, and
// every event after it was lost).
func TestALongRunIDBreaksNothingAfter(t *testing.T) {
	s := startServer(t)
	sub, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ch := make(chan *nats.Msg, 1024)
	if _, err := sub.ChanSubscribe(bus.Filter("sess"), ch); err != nil {
		t.Fatal(err)
	}
	sub.Flush()
	nc, err := bus.Connect(bus.Config{URL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sink := bus.NewSink(nc)
	now := time.Now()
	sink.Emit(engine.Event{V: 1, Session: "sess", Run: "run-1/1/" + strings.Repeat("c", 5000), Kind: engine.KindToolStarted, Time: now})
	for i := range 30 {
		sink.Emit(engine.Event{V: 1, Session: "sess", Run: "run-1", Step: i, Kind: engine.KindStepStarted, Time: now})
	}
	if err := sink.Close(5 * time.Second); err != nil {
		t.Fatalf("not everything was published: %v", err)
	}
	for got := 0; got < 31; got++ {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of 31 events arrived", got)
		}
	}
}
