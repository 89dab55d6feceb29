package tools

import (
	"context"
	"time"

	"github.com/agentty/agentty/engine"
)

// Clock tells the current date and time. now is the time source; nil means
// time.Now.
func Clock(now func() time.Time) engine.Tool {
	if now == nil {
		now = time.Now
	}
	return engine.Tool{
		Name:        "clock",
		Description: "The current local date, time and time zone, and the UTC time.",
		Schema:      []byte(`{"type":"object","properties":{},"additionalProperties":false}`),
		Inline:      true,
		Repeatable:  true,
		Func: func(context.Context, *engine.Call) (string, error) {
			t := now()
			return t.Format("Monday 2 January 2006, 15:04:05 MST (-07:00)") + "; UTC " + t.UTC().Format(time.RFC3339), nil
		},
	}
}
