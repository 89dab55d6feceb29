package sessions

import (
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
)

// TestExportHandoffIsAParagraph: the line that says a run was handed off
// ends its list with a blank line, so the new agent's heading is a
// heading in every Markdown viewer (issue 54's smaller items).
func TestExportHandoffIsAParagraph(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	l := &Loaded{Meta: Meta{ID: "s1", Created: now}, Events: []engine.Event{
		{Run: "run-1", Kind: engine.KindRunStarted, Data: &engine.RunStarted{Task: "a refund"}},
		{Run: "run-1", Kind: engine.KindHandoff, Data: &engine.Handoff{From: "triage", To: "billing"}},
		{Run: "run-1", Agent: "billing", Kind: engine.KindDecision, Data: &engine.Decided{Text: "Refunded."}},
	}}
	if md := Markdown(l); !strings.Contains(md, "- handed off to **billing**\n\n## billing\n") {
		t.Errorf("the handoff runs into the heading:\n%s", md)
	}
}
