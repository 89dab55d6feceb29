package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call of an MCP server's tool: sent once, its server started again first
// if it died, its result as text.

// ErrMCPServerDied is the error of a call whose server exited while the
// call was in flight: whether it ran is unknown, and it is not sent again.
var ErrMCPServerDied = errors.New("the MCP server exited during the call; it was not run again")

// call calls a tool, starting its server again first if it has died. The
// call itself is sent once: a server that dies under it makes it fail.
func (m *MCP) call(ctx context.Context, s *mcpServer, tool string, args json.RawMessage) (string, error) {
	var params map[string]any
	if err := json.Unmarshal(args, &params); err != nil {
		return "", err
	}
	if params == nil {
		params = map[string]any{} // some servers reject null arguments
	}
	s.mu.Lock()
	sess, serr := s.session, s.err
	if sess != nil && isDone(s.closed) {
		// It died since its last call (or was closed): this call has
		// not been sent, so it goes to a server started again.
		sess.Close()
		s.session, sess = nil, nil
	}
	if sess == nil {
		serr = m.connect(ctx, s)
		s.err = serr
		sess = s.session
	}
	log := s.log
	s.mu.Unlock()
	if sess == nil {
		return "", fmt.Errorf("MCP server %s is not running: %v", s.name, serr)
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: params})
	if err != nil {
		if ctx.Err() == nil && isClosed(err) {
			// Started again for the next call, not for this one.
			s.mu.Lock()
			if s.session == sess {
				sess.Close()
				s.session = nil
				s.err = fmt.Errorf("exited (%v)", err)
			}
			s.mu.Unlock()
			return "", fmt.Errorf("MCP server %s: %w (%v)", s.name, log.explain(ErrMCPServerDied), err)
		}
		return "", fmt.Errorf("MCP server %s: %v", s.name, err)
	}
	text := resultText(res)
	if res.IsError {
		return "", errors.New(text)
	}
	return text, nil
}

// isDone reports whether ch is closed (a nil ch is not).
func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return ch != nil
	default:
		return false
	}
}

func isClosed(err error) bool {
	msg := err.Error()
	return errors.Is(err, mcp.ErrConnectionClosed) || strings.Contains(msg, "closed") || strings.Contains(msg, "EOF") || strings.Contains(msg, "broken pipe")
}

// resultText turns a result into text: text content as it is, other
// content described, structured content as JSON when there is no text.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]", c.Resource.URI))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		return string(b)
	}
	return strings.Join(parts, "\n")
}
