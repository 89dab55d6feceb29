package tools

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

const maxHTTPBody = 64 << 10

// HTTPGet fetches a URL from one of the allowed hosts (a host, or
// host:port). It is off unless enabled with an allow-list. transport nil
// means http.DefaultTransport.
func HTTPGet(allowHosts []string, transport http.RoundTripper) engine.Tool {
	hosts := make([]string, len(allowHosts))
	for i, h := range allowHosts {
		hosts[i] = strings.ToLower(h)
	}
	allowed := func(u *url.URL) bool {
		host := strings.ToLower(u.Hostname())
		return slices.Contains(hosts, host) || slices.Contains(hosts, net.JoinHostPort(host, u.Port()))
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !allowed(req.URL) {
				return fmt.Errorf("refused: redirected to %s, which is not an allowed host", req.URL.Hostname())
			}
			if len(via) >= 5 {
				return fmt.Errorf("too many redirects")
			}
			return nil
		}}
	return engine.Tool{
		Name:        "http_get",
		Description: "Fetch a web page or API response by GET (text, capped at 64 KB). Allowed hosts: " + strings.Join(hosts, ", ") + ".",
		Schema:      []byte(`{"type":"object","properties":{"url":{"type":"string","minLength":1}},"required":["url"],"additionalProperties":false}`),
		Retryable:   true,
		Timeout:     40 * time.Second,
		Func: func(ctx context.Context, c *engine.Call) (string, error) {
			var in struct{ URL string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			u, err := url.Parse(in.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return "", engine.Permanent(fmt.Errorf("refused: %q is not an http(s) URL", in.URL))
			}
			host := strings.ToLower(u.Hostname())
			if !allowed(u) {
				return "", engine.Permanent(fmt.Errorf("refused: %s is not an allowed host (allowed: %s)", host, strings.Join(hosts, ", ")))
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
			if err != nil {
				return "", engine.Permanent(err)
			}
			req.Header.Set("User-Agent", "agentty")
			resp, err := client.Do(req)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody+1))
			if err != nil {
				return "", err
			}
			if resp.StatusCode == 429 || resp.StatusCode >= 500 {
				return "", engine.Transient(fmt.Errorf("%s from %s", resp.Status, host), 0)
			}
			body := string(b)
			if len(b) > maxHTTPBody {
				body = string(b[:maxHTTPBody]) + "\n[response cut at 64 KB]"
			}
			return fmt.Sprintf("%s %s\nContent-Type: %s\n\n%s", resp.Proto, resp.Status, resp.Header.Get("Content-Type"), body), nil
		},
	}
}
