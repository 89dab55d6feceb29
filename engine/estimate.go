package engine

// EstimateTokens estimates the tokens of s at four bytes a token, the usual
// rule of thumb for English text and code with BPE tokenizers.
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }

// EstimateMessage estimates the tokens a message costs in a request,
// counting a few tokens of framing per message and per tool call.
func EstimateMessage(m Message) int { return estimateMessage(&m) }

func estimateMessage(m *Message) int {
	n := 4 + EstimateTokens(m.Content)
	for _, c := range m.ToolCalls {
		n += 4 + EstimateTokens(c.Name) + EstimateTokens(string(c.Args))
	}
	return n
}

func estimateFacts(fs []Fact) int {
	n := 0
	for _, f := range fs {
		n += 3 + EstimateTokens(f.Key) + EstimateTokens(f.Value)
	}
	return n
}

// EstimateTools estimates the tokens tool schemas cost in a request.
func EstimateTools(ts []ToolSchema) int { return estimateTools(ts) }

func estimateTools(ts []ToolSchema) int {
	n := 0
	for _, t := range ts {
		n += 8 + EstimateTokens(t.Name) + EstimateTokens(t.Description) + EstimateTokens(string(t.Parameters))
	}
	return n
}

// trimStart returns the index of the first history message that fits in
// budget tokens, keeping the newest messages. The cut never falls on a tool
// result, so an assistant message with tool calls is kept together with its
// results; when not even the newest exchange fits, that exchange is kept
// anyway. It costs O(log n): prefix sums of the token estimates are kept as
// the history grows.
func (s *Session) trimStart(budget int) int {
	n := len(s.History)
	if s.tokensOf(0, n) <= budget {
		return 0
	}
	// The smallest i with tokens[n]-tokens[i] <= budget.
	lo, hi := 0, n
	for lo < hi {
		mid := (lo + hi) / 2
		if s.tokensOf(mid, n) <= budget {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	i := lo
	for i < n && s.History[i].Role == RoleTool {
		i++
	}
	if i == n { // keep at least the newest message, with its tool-call pair
		i = n - 1
		for i > 0 && s.History[i].Role == RoleTool {
			i--
		}
	}
	return i
}
