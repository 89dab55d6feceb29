package offline

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentty/agentty/engine"
)

// This file reads requests to search the workspace and the past sessions
// ("search for the retry policy", "what did we say about the retry
// policy?", "find notes on compaction") and answers from what
// search_knowledge returns. It plans a search only when search_knowledge is
// offered; otherwise the request falls through to the other rules.

const searchTool = "search_knowledge"

var (
	searchRe = lazyRegexp(`(?i)^\s*(?:please\s+)?(?:search|look\s+up|find)(?:\s+(?:for|in\s+(?:the\s+)?(?:sessions|workspace|files)\s+for))?\s+(?:notes?\s+(?:on|about)\s+)?(.+?)\s*[.?!]?\s*$`)
	saidRe   = lazyRegexp(`(?i)^\s*(?:what|when)\s+(?:did|have)\s+(?:we|i|you)\s+(?:say|said|decide|decided|discuss|discussed|agree|agreed|conclude|concluded)\s+(?:about|on|regarding)\s+(.+?)\s*[.?!]?\s*$`)
)

// knowledge plans a search_knowledge call for a request to search; the
// scope is the past sessions for "what did we say about …", and everything
// otherwise (the sessions or the workspace when the request names one).
func knowledge(t string, req *engine.Request) (engine.Decision, bool) {
	if !has(req, searchTool) {
		return engine.Decision{}, false
	}
	scope := "all"
	var query string
	if m := saidRe.FindStringSubmatch(t); m != nil {
		query, scope = m[1], "sessions"
	} else if m := searchRe.FindStringSubmatch(t); m != nil {
		query = m[1]
		lower := strings.ToLower(t)
		switch {
		case strings.Contains(lower, " in the sessions") || strings.Contains(lower, " in sessions"):
			scope = "sessions"
		case strings.Contains(lower, " in the workspace") || strings.Contains(lower, " in workspace") || strings.Contains(lower, " in the files") || strings.Contains(lower, " in files"):
			scope = "workspace"
		}
	} else {
		return engine.Decision{}, false
	}
	query = strings.Trim(query, " \"'`")
	if query == "" || strings.EqualFold(query, "files") { // "find files" is list_dir's
		return engine.Decision{}, false
	}
	b, _ := json.Marshal(map[string]any{"query": query, "scope": scope})
	return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "call_" + searchTool, Name: searchTool, Args: b}}}, true
}

// knowledgeAnswer answers from a search_knowledge result: the chunks found,
// as they came, under one line saying what they are.
func knowledgeAnswer(result string) string {
	if strings.HasPrefix(result, "nothing found") {
		return strings.ToUpper(result[:1]) + result[1:] + "."
	}
	n := strings.Count("\n"+result, "\n[")
	// Quoted as code, by a fence longer than any run of backticks in
	// it: a file's own fences and headings are shown as they are.
	fence := "```"
	for strings.Contains(result, fence) {
		fence += "`"
	}
	return fmt.Sprintf("Found %d passage(s), best first:\n\n%s\n%s\n%s", n, fence, result, fence)
}
