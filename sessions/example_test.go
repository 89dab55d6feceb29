package sessions_test

import (
	"context"
	"fmt"
	"os"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/tools"
)

// A session journaled to disk as it runs, and resumed from its journal
// in a later run (as after a restart): the session's memory comes back
// with it.
func Example() {
	dir, err := os.MkdirTemp("", "agentty-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store, err := sessions.Open(dir)
	if err != nil {
		panic(err)
	}
	reg, _ := engine.NewRegistry(tools.Builtins()...)
	e := engine.New(engine.Config{Model: offline.Model{}, Tools: reg})

	j, err := store.Create() // the journal is the run's sink
	if err != nil {
		panic(err)
	}
	s := engine.NewSession(j.ID)
	e.Run(context.Background(), s, "remember that my name is Ada", j)
	j.Close()

	j, loaded, _, err := store.Resume(j.ID) // another day, another process
	if err != nil {
		panic(err)
	}
	defer j.Close()
	res := e.Run(context.Background(), loaded.Session, "what is my name?", j)
	fmt.Println(res.Answer)
	// Output: Your name is Ada.
}
