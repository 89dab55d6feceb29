package engine

import (
	"context"
	"fmt"
	"time"
)

// The tool calls of a step carried out: each a job with its attempts,
// timeouts and retries, on the clock of the run's goroutine.

// runJobs runs jobs in parallel, one goroutine per attempt, while this
// goroutine keeps the clock: timeouts, retry delays and cancellation are
// decided here, so a tool that ignores its context cannot hold the run. A
// step's only isolated job runs watched instead (runWatched): on this
// goroutine, which a watchdog leaves to the tool if it overruns, the run
// going on on another.
//
// Every job that got a tool_started gets exactly one tool_finished, however
// the act phase ends: when it ends early (cancelled, an inline tool's
// retry cut short, a sink that failed), the jobs still running or waiting
// to retry are cancelled and reported as such. A job that never started
// gets no event here; its call is left without a result, as a call is when
// the run is cancelled at the gate.
func (r *run) runJobs(ctx context.Context, jobs []toolJob) (StopReason, error) {
	stop, err := r.driveJobs(ctx, jobs)
	if stop == stopSuperseded {
		return stop, nil
	}
	return r.endJobs(ctx, jobs, stop, err)
}

// endJobs ends runJobs once driveJobs returned stop and err.
func (r *run) endJobs(ctx context.Context, jobs []toolJob, stop StopReason, err error) (StopReason, error) {
	if r.outstanding > 0 {
		// An abandoned attempt may still answer: the next step gets a
		// channel of its own.
		r.results, r.outstanding = nil, 0
	}
	for j := range jobs {
		jobs[j].stop()
	}
	// Sub-runs end (cancelled, if they were still going) before the run
	// reports their calls: their events come first.
	r.children.Wait()
	if stop == "" {
		return "", nil
	}
	r.stopTimer()
	now := r.now()
	for j := range jobs {
		jb := &jobs[j]
		if !jb.started || jb.finished {
			continue
		}
		jb.finished = true
		fin := &ToolFinished{Index: jb.idx, ID: jb.call.ID, Name: jb.call.Name, Status: ToolError, Result: "error: cancelled",
			Error: err.Error(), Attempts: jb.attempt, DurationMS: jb.took(now)}
		if e := r.emitAt(now, Act, KindToolFinished, fin); e != nil && stop != StopError {
			stop, err = StopError, e
		}
	}
	return stop, err
}

// driveJobs starts the jobs and waits for them, as runJobs says. It returns
// a stop reason when the run must end; the jobs left unfinished are then
// runJobs' to report.
func (r *run) driveJobs(ctx context.Context, jobs []toolJob) (StopReason, error) {
	var results chan toolResult
	left := 0
	var now time.Time // the clock's last reading
	for j := range jobs {
		jb := &jobs[j]
		if j == 0 && r.stepTool != nil {
			jb.tp, r.stepTool = r.stepTool, nil
		} else {
			jb.tp = new(toolPayloads)
		}
		jb.start = r.stamp()
		now = jb.start
		jb.started = true // even if the sink fails on it: the session applied it
		jb.tp.started = ToolStarted{Index: jb.idx, ID: jb.call.ID, Name: jb.call.Name, Args: r.journaledArgs(jb.call.Args)}
		if err := r.emitAt(jb.start, Act, KindToolStarted, &jb.tp.started); err != nil {
			return StopError, err
		}
		// tool_started is written before the tool runs, so that a run
		// continued after a crash knows the call may have run; a pure tool
		// (Inline and Repeatable: arithmetic, memory, the clock) may simply
		// run again, and its events go with the step's end: a write fewer.
		if !jb.tool.Inline || !jb.tool.Repeatable {
			if err := r.flush(); err != nil {
				return StopError, err
			}
		}
		jb.ran = r.now()
		if jb.tool.Inline {
			if stop, err := r.runInline(ctx, jb); stop != "" {
				return stop, err
			}
			continue
		}
		if len(jobs) == 1 && r.w != nil && r.w.calls > 0 && jb.tool.builtin != toolDelegate {
			return r.runWatched(ctx, jobs, now) // watch.go
		}
		if results == nil {
			results = r.isolate(ctx, len(jobs))
		}
		r.launch(ctx, j, jb, results, now)
		left++
	}
	return r.waitJobs(ctx, jobs, results, left, now)
}

// waitJobs waits for the left jobs of driveJobs still running or waiting
// to retry, their isolated attempts answering on results; now is the
// clock's last reading.
func (r *run) waitJobs(ctx context.Context, jobs []toolJob, results chan toolResult, left int, now time.Time) (StopReason, error) {
	for left > 0 {
		var next time.Time
		for j := range jobs {
			if w := jobs[j].wake(); !w.IsZero() && (next.IsZero() || w.Before(next)) {
				next = w
			}
		}
		if _, ok := r.sink.(Flusher); ok {
			if err := r.flush(); err != nil {
				return StopError, err
			}
			now = r.now() // a flush may write to disk
		}
		r.arm(next, now)
		select {
		case res := <-results:
			r.outstanding--
			jb := &jobs[res.job]
			if !jb.active || res.attempt != jb.attempt {
				r.release(res.slot)
				continue // a late answer from an attempt that timed out
			}
			now = r.now()
			done, err := r.settle(ctx, jb, res.out, res.err, now)
			r.release(res.slot)
			if err != nil {
				return StopError, err
			}
			if done {
				left--
			}
		case <-r.wake:
			now = r.now()
			if ctx.Err() != nil {
				return StopCancelled, ctx.Err()
			}
			if !r.timerAt.IsZero() && !now.Before(r.timerAt) {
				r.timerAt = time.Time{} // it has fired
			}
			for j := range jobs {
				jb := &jobs[j]
				switch {
				case jb.active && !now.Before(jb.deadline):
					jb.stop()
					done, err := r.settle(ctx, jb, "", Transient(fmt.Errorf("timed out after %s", jb.timeout), 0), now)
					if err != nil {
						return StopError, err
					}
					if done {
						left--
					}
				case !jb.active && !jb.retryAt.IsZero() && !now.Before(jb.retryAt):
					jb.retryAt = time.Time{}
					r.launch(ctx, j, jb, results, now)
				}
			}
		}
	}
	return "", nil
}

// runInline runs an Inline tool's attempts on this goroutine.
func (r *run) runInline(ctx context.Context, jb *toolJob) (StopReason, error) {
	start := jb.start
	for {
		jb.active = true
		r.view = MemoryView{base: r.memory()}
		jb.view = &r.view
		r.call = Call{ID: jb.call.ID, Args: jb.call.Args, Step: r.step, Session: r.root.ID, Run: r.id, Memory: jb.view}
		jb.cur = &r.call
		out, err := inlineTool(ctx, jb.tool.Func, &r.call)
		end := r.now()
		if err == nil && end.Sub(start) > jb.timeout {
			err = Transient(fmt.Errorf("timed out after %s", jb.timeout), 0)
		}
		done, err := r.settle(ctx, jb, out, err, end)
		if err != nil {
			return StopError, err
		}
		if done {
			return "", nil
		}
		if err := r.flush(); err != nil {
			return StopError, err
		}
		if err := sleep(ctx, time.Until(jb.retryAt)); err != nil {
			return StopCancelled, ctx.Err()
		}
		jb.retryAt = time.Time{}
		start = r.now()
	}
}

// inlineTool runs an Inline tool on this goroutine; a panic becomes an
// error.
func inlineTool(ctx context.Context, fn func(context.Context, *Call) (string, error), call *Call) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("tool panicked: %v", p)
		}
	}()
	return fn(ctx, call)
}

// stop ends the context of the job's attempt, if it has one.
func (jb *toolJob) stop() {
	switch {
	case jb.cc != nil:
		jb.cc.cancel()
	case jb.cancel != nil:
		jb.cancel()
	}
}

// wake returns when the job next needs the clock: its attempt's deadline,
// or the end of its retry delay; zero when it needs nothing.
func (jb *toolJob) wake() time.Time {
	if jb.active {
		return jb.deadline
	}
	return jb.retryAt
}

// settle handles the end of an attempt: success, a retry, or failure. It
// reports whether the job is finished.
func (r *run) settle(ctx context.Context, jb *toolJob, out string, err error, now time.Time) (bool, error) {
	cfg := &r.e.cfg
	jb.active = false
	jb.stop()
	if err != nil && jb.tool.Retryable && IsRetryable(err) && jb.attempt < cfg.Retry.Attempts && ctx.Err() == nil {
		after, status := retryInfo(err)
		d := cfg.Retry.Delay(jb.attempt, after)
		jb.attempt++
		jb.retryAt = now.Add(d)
		return false, r.emit(Act, KindRetry, &RetryScheduled{Op: "tool:" + jb.tool.Name, Attempt: jb.attempt, DelayMS: d.Milliseconds(), Cause: err.Error(), Status: status})
	}
	jb.finished = true // even if the sink fails on it: the session applied it
	fin := &jb.tp.finished
	*fin = ToolFinished{Index: jb.idx, ID: jb.call.ID, Name: jb.call.Name, Attempts: jb.attempt, DurationMS: jb.took(now)}
	var changes []MemoryChanged
	if err != nil {
		fin.Status, fin.Error = ToolError, err.Error()
		out = "error: " + err.Error()
	} else {
		fin.Status = ToolOK
		changes = jb.view.changes
		if jb.cur != nil {
			fin.Structured = jb.cur.structured
		}
	}
	fin.Result, fin.Truncated = truncate(out, cfg.MaxResultBytes)
	var post hookVerdict
	if cfg.Hooks != nil {
		post = r.postToolHooks(ctx, &jb.call, fin)
	}
	r.redactFinished(fin)
	if err := r.emitAt(now, Act, KindToolFinished, fin); err != nil {
		return true, err
	}
	if err := r.emitHooks(Observe, &post); err != nil {
		return true, err
	}
	for i := range changes {
		r.redactMemory(&changes[i])
		if err := r.emitAt(now, Observe, KindMemoryChanged, &changes[i]); err != nil {
			return true, err
		}
	}
	return true, nil
}
