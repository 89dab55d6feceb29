// Command floor is the side-by-side harness's workload with no runtime at
// all: the same instant model and echo tool as ../shared/bench/agentty, the
// same goroutine per run and the same measurement, and between them only a
// preallocated message history, appended to. Whatever a runtime does costs
// more than this, so Eino's CPU per step divided by the floor's is the
// highest RATIO line any runtime could reach on this harness (see
// BENCHMARKS.md, "The harness's floor", and floor.sh beside this folder).
//
//	floor steps  [N=1000]          one run, N tool-call steps, then a final answer
//	floor concur [M=1000] [S=10]   M runs of S steps each, all started at once
//
// Env: WARMUP=<steps> (default 10; 0 = none). Prints one line, "RESULT
// key=value ...", as the harness does.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentty/agentty/engine"
)

// instantModel is the harness's model, unchanged: it reads only the last
// message.
type instantModel struct{}

func (instantModel) Decide(_ context.Context, req *engine.Request) (engine.Decision, error) {
	msgs := req.Messages
	last := msgs[len(msgs)-1]
	var next, target int
	if last.Role == engine.RoleUser {
		next = 1
		target, _ = strconv.Atoi(strings.TrimPrefix(last.Content, "steps="))
	} else {
		k, t, _ := strings.Cut(last.ToolCallID[1:], "/")
		ki, _ := strconv.Atoi(k)
		next = ki + 1
		target, _ = strconv.Atoi(t)
	}
	if next > target {
		return engine.Decision{Text: "done"}, nil
	}
	return engine.Decision{ToolCalls: []engine.ToolCall{{
		ID:   "c" + strconv.Itoa(next) + "/" + strconv.Itoa(target),
		Name: "echo",
		Args: json.RawMessage(`{"i":` + strconv.Itoa(next) + `}`),
	}}}, nil
}

var toolCalls atomic.Int64

// echo is the harness's tool function, unchanged.
func echo(context.Context, *engine.Call) (string, error) {
	toolCalls.Add(1)
	return "ok", nil
}

// runOnce is all a run is here: decide, call, append, until the answer.
func runOnce(steps int) {
	ctx := context.Background()
	var model instantModel
	msgs := make([]engine.Message, 1, 2*steps+2)
	msgs[0] = engine.Message{Role: engine.RoleUser, Content: "steps=" + strconv.Itoa(steps)}
	for {
		d, err := model.Decide(ctx, &engine.Request{Messages: msgs})
		if err != nil {
			die(err)
		}
		if len(d.ToolCalls) == 0 {
			msgs = append(msgs, engine.Message{Role: engine.RoleAssistant, Content: d.Text})
			break
		}
		msgs = append(msgs, engine.Message{Role: engine.RoleAssistant, ToolCalls: d.ToolCalls})
		for _, c := range d.ToolCalls {
			out, err := echo(ctx, &engine.Call{ID: c.ID, Args: c.Args})
			if err != nil {
				die(err)
			}
			msgs = append(msgs, engine.Message{Role: engine.RoleTool, Content: out, ToolCallID: c.ID})
		}
	}
	if msgs[len(msgs)-1].Content != "done" {
		die(fmt.Errorf("the run ended with %q", msgs[len(msgs)-1].Content))
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func argInt(i, def int) int {
	if len(os.Args) > i {
		if v, err := strconv.Atoi(os.Args[i]); err == nil {
			return v
		}
	}
	return def
}

func die(err error) { fmt.Fprintln(os.Stderr, err); os.Exit(1) }

func main() {
	mode := "steps"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	warm := 10
	if v := os.Getenv("WARMUP"); v != "" {
		warm, _ = strconv.Atoi(v)
	}
	if warm > 0 {
		runOnce(warm)
	}
	toolCalls.Store(0)
	switch mode {
	case "steps":
		n := argInt(2, 1000)
		t0, c0 := time.Now(), cpuTime()
		runOnce(n)
		el, cel := time.Since(t0), cpuTime()-c0
		if got := toolCalls.Load(); got != int64(n) {
			die(fmt.Errorf("expected %d tool calls, got %d", n, got))
		}
		fmt.Printf("RESULT mode=steps n=%d wall_ms=%.2f us_per_step=%.2f cpu_us_per_step=%.2f\n",
			n, float64(el.Microseconds())/1000, float64(el.Nanoseconds())/1000/float64(n),
			float64(cel.Nanoseconds())/1000/float64(n))
	case "concur":
		m, s := argInt(2, 1000), argInt(3, 10)
		var wg sync.WaitGroup
		t0, c0 := time.Now(), cpuTime()
		for i := 0; i < m; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runOnce(s)
			}()
		}
		wg.Wait()
		el, cel := time.Since(t0), cpuTime()-c0
		if got := toolCalls.Load(); got != int64(m*s) {
			die(fmt.Errorf("expected %d tool calls, got %d", m*s, got))
		}
		fmt.Printf("RESULT mode=concur m=%d s=%d wall_ms=%.2f runs_per_s=%.0f cpu_us_per_step=%.2f\n",
			m, s, float64(el.Microseconds())/1000, float64(m)/el.Seconds(), float64(cel.Nanoseconds())/1000/float64(m*s))
	default:
		die(fmt.Errorf("unknown mode %q", mode))
	}
}
