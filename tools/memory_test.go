package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
)

func TestMemoryTools(t *testing.T) {
	mem := &engine.MemoryView{}
	call := func(tool engine.Tool, args string) (string, error) {
		return tool.Func(context.Background(), &engine.Call{Args: json.RawMessage(args), Memory: mem})
	}
	steps := []struct {
		tool    engine.Tool
		args    string
		want    string
		wantErr string
	}{
		{Recall(), `{}`, "memory is empty", ""},
		{Remember(), `{"key":"My Name","value":"Ada"}`, "remembered name = Ada", ""},
		{Recall(), `{"key":"name"}`, "name = Ada", ""},
		{Remember(), `{"key":"name","value":"Grace"}`, "remembered name = Grace (was Ada)", ""},
		{Remember(), `{"key":"city","value":"London"}`, "remembered city = London", ""},
		{Recall(), `{}`, "name = Grace\ncity = London", ""},
		{Forget(), `{"key":"the name"}`, "forgot name", ""},
		{Recall(), `{"key":"name"}`, "", `nothing is remembered under "name"`},
		{Forget(), `{"key":"name"}`, "", `nothing is remembered under "name"`},
		{Remember(), `{"key":"  ","value":"x"}`, "", "the key is empty"},
	}
	for i, s := range steps {
		got, err := call(s.tool, s.args)
		if s.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), s.wantErr) {
				t.Errorf("step %d %s(%s): err %v, want %q", i, s.tool.Name, s.args, err, s.wantErr)
			}
			continue
		}
		if err != nil || got != s.want {
			t.Errorf("step %d %s(%s) = %q, %v; want %q", i, s.tool.Name, s.args, got, err, s.want)
		}
	}
}

func TestClock(t *testing.T) {
	at := time.Date(2026, 11, 29, 21, 30, 0, 0, time.FixedZone("CET", 3600))
	out, err := Clock(func() time.Time { return at }).Func(context.Background(), &engine.Call{})
	want := "Sunday 29 November 2026, 21:30:00 CET (+01:00); UTC 2026-11-29T20:30:00Z"
	if err != nil || out != want {
		t.Errorf("clock = %q, %v; want %q", out, err, want)
	}
}
